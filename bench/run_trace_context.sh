#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What fxagent.TraceContext.set and clear cost (issue 33 item 4: at most 50 ns a call): runs
# TraceContextBench (java-test/markers/fxagent/test) under the agent (interval=10ms, samples on)
# and without it (the no-op path), MILLIONS million calls per round, ROUNDS rounds; prints the
# machine, its load, the exact commands and each run's per-round and summary lines (min and
# median ns per call; the empty loop's own cost per iteration beside them). Builds the agent and
# the jar with the project's build (build/, or BUILD=DIR) first; JAVA_HOME picks the JDK.
# usage: bench/run_trace_context.sh [MILLIONS [ROUNDS]]      (default 20 7)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
millions=${1:-20}
rounds=${2:-7}
jdk=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
build=${BUILD:-$root/build}
cmake --build "$build" -j2 --target fxagent fxagent_markers_jar >/dev/null
work=$(mktemp -d /tmp/fxtcbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
printf '%s\n\n' "Machine: $cpu, nproc $(nproc); $("$jdk/bin/java" -version 2>&1 | head -n 1); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for config in agent none; do
    agent=()
    [[ $config == agent ]] && agent=("-agentpath:$build/agent/libfxagent.so=interval=10ms,quiet,file=$work/p.json.gz")
    cmd=("$jdk/bin/java" "${agent[@]}" -cp "$build/java-test/fxagent-markers.jar" fxagent.test.TraceContextBench "$millions" "$rounds")
    echo "### ${config}: \`${cmd[*]}\`"
    echo
    echo '```'
    "${cmd[@]}"
    echo '```'
    echo
done
echo "- load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
