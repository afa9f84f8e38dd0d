#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The stack-coverage benchmark of issue 20 (docs/BENCHMARKS.md "Stacks on everyday code"), one
# command: samples without a stack (%, by failure kind), samples with the caller on the stack (%),
# recovered stacks (%) and the handler's mean CPU time per signal, on the megamorphic workload
# (java-test/stacks) and on javac compiling its JDK's own java.base sources, per JDK, per agent
# build, and for async-profiler in the same interleaved rounds. Runs bench/stack_coverage.py.
#   bench/run_stack_coverage.sh --build main=/work/main/build [--build after=DIR]... [--runs N]
#        [--seconds S] [--jdk HOME]... [--src-zip MAJOR=PATH]... [--workloads mega,javac]
#        [--out DIR] [--keep] [--report-only]
# --build LABEL=DIR  an agent build dir (DIR/agent/libfxagent.so); repeatable; default: this
#                    checkout's build/ as "this"
# JDKs: FXAGENT_TEST_JDKS (colon-separated homes) or every JDK in /usr/lib/jvm, as the tests do
# (tests/it/jdks.sh); --jdk HOME (repeatable) overrides both. javac reads HOME/lib/src.zip; where
# that is missing (Debian's JDK 17 links it to the openjdk-17-source package) give the zip with
# --src-zip 17=PATH, e.g. from `apt-get download openjdk-17-source && dpkg-deb -x *.deb x`.
# async-profiler: ASYNC_PROFILER_HOME (with lib/libasyncProfiler.so) if set; skipped otherwise.
# Defaults: 5 runs, mega for 8 s of CPU, results and report.md in a fresh /tmp directory.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=
jdk_args=()
py_args=()
builds=()
while [[ $# -gt 0 ]]; do
    case $1 in
    --build) builds+=(--build "$2"); shift 2 ;;
    --jdk) jdk_args+=("$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --runs | --seconds | --src-zip | --workloads) py_args+=("$1" "$2"); shift 2 ;;
    --keep | --report-only) py_args+=("$1"); shift ;;
    *) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
[[ ${#builds[@]} -gt 0 ]] || builds=(--build "this=$root/build")
[[ -n "$out" ]] || out=$(mktemp -d /tmp/fxbench-stacks.XXXXXX)

# shellcheck source=../tests/it/jdks.sh
source "$root/tests/it/jdks.sh"
fx_jdk_specs "${jdk_args[@]}"
jdk_specs=("${FX_JDK_SPECS[@]}")
if [[ ${#jdk_specs[@]} -eq 0 ]]; then
    echo "run_stack_coverage.sh: no usable JDK found (set FXAGENT_TEST_JDKS or use --jdk)" >&2
    exit 1
fi
if [[ -n "${ASYNC_PROFILER_HOME:-}" ]]; then
    py_args+=(--async-profiler "$ASYNC_PROFILER_HOME")
else
    echo "run_stack_coverage.sh: ASYNC_PROFILER_HOME is not set: async-profiler is skipped" >&2
fi
echo "run_stack_coverage.sh: results in $out; $(nproc) CPUs, load average now:" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
exec python3 "$root/bench/stack_coverage.py" --out "$out" "${jdk_specs[@]}" "${builds[@]}" \
    "${py_args[@]}"
