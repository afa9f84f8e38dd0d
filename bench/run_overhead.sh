#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxagent's overhead benchmark, one command (docs/BENCHMARKS.md, "Agent overhead"):
#   bench/run_overhead.sh            full run, about 20 minutes with two JDKs on 2 idle cores
#   bench/run_overhead.sh --quick    2 rounds of less work, for checking the harness (~5 min);
#                                    its plots go to OUT/plots, not docs/bench
# Builds the agent, fxcheck and the Java workloads (RelWithDebInfo) in build-overhead/ (or
# --build-dir), then runs bench/overhead.py: the workloads of java-test/bench under no profiler,
# fxagent cpu 10 ms / cpu 1 ms / wall 10 ms, JFR settings=profile, and the agent given in
# FXAGENT_BENCH_OTHER_AGENT (JVM options, split like a shell would), e.g.
#   FXAGENT_BENCH_OTHER_AGENT="-agentpath:/opt/ap/lib/libasyncProfiler.so=start,event=cpu,interval=10ms,file=/dev/null"
# interleaved round-robin; prints Markdown tables (also in OUT/report.md) and writes the PNG plots
# to docs/bench/ (--plots DIR; --no-plots to skip).
# JDKs: FXAGENT_TEST_JDKS (colon-separated homes) or every JDK in /usr/lib/jvm, as the tests do
# (tests/it/jdks.sh); --jdk HOME (repeatable) overrides both.
# usage: bench/run_overhead.sh [--quick] [--parts overhead,cost,scaling,accuracy] [--reps N]
#        [--reps-small N] [--scale X] [--out DIR] [--build-dir DIR] [--jdk HOME]... [--keep]
#        [--plots DIR | --no-plots] [--no-build] [--report-only] [--baseline-agent SO]
#        [--configs A,B,...]
# --no-build runs what --build-dir already holds (e.g. to measure a fixed agent build).
# --baseline-agent SO adds configurations base-cpu-10ms/base-cpu-1ms: the same options with another
# build of the agent (e.g. main's), in the same rounds; --configs A,B,... restricts the overhead
# part to those configurations (none, fx-cpu-10ms, fx-cpu-1ms, fx-wall-10ms, jfr-profile, other,
# base-cpu-10ms, base-cpu-1ms).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-overhead
out=
plots=$root/docs/bench
jdk_args=()
py_args=()
quick=0
report_only=0
build_it=1
while [[ $# -gt 0 ]]; do
    case $1 in
    --quick) quick=1; shift ;;
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --jdk) jdk_args+=("$2"); shift 2 ;;
    --plots) plots=$2; shift 2 ;;
    --no-plots) plots=; shift ;;
    --report-only) report_only=1; shift ;;
    --no-build) build_it=0; shift ;;
    --parts | --reps | --reps-small | --scale | --baseline-agent | --configs)
        py_args+=("$1" "$2"); shift 2 ;;
    --keep) py_args+=("$1"); shift ;;
    *) sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
if [[ -z "$out" ]]; then
    out=$(mktemp -d /tmp/fxbench-overhead.XXXXXX)
fi

if [[ $report_only -eq 0 && $build_it -eq 1 ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j2 --target fxagent fxcheck fxagent_bench_jar fxagent_demo >/dev/null
fi

# JDKs: the tests' discovery (same FXAGENT_TEST_JDKS, same rules), unless --jdk was given.
# shellcheck source=../tests/it/jdks.sh
source "$root/tests/it/jdks.sh"
fx_jdk_specs "${jdk_args[@]}"
jdk_specs=("${FX_JDK_SPECS[@]}")
if [[ ${#jdk_specs[@]} -eq 0 ]]; then
    echo "run_overhead.sh: no usable JDK found (set FXAGENT_TEST_JDKS or use --jdk)" >&2
    exit 1
fi

if [[ $quick -eq 1 ]]; then
    [[ "$plots" == "$root/docs/bench" ]] && plots=$out/plots # quick figures never replace the docs'
    py_args=(--quick --reps 2 --reps-small 1 --scale 0.3 "${py_args[@]}")
fi
[[ $report_only -eq 1 ]] && py_args+=(--report-only)
[[ -n "$plots" ]] && py_args+=(--plots "$plots")
echo "run_overhead.sh: results in $out (load average now: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
exec python3 "$root/bench/overhead.py" --out "$out" "${jdk_specs[@]}" \
    --agent "$build/agent/libfxagent.so" --jar "$build/java-test/fxagent-bench.jar" \
    --demo-jar "$build/java-test/fxagent-demo.jar" --fxcheck "$build/tests/tools/fxcheck" \
    "${py_args[@]}"
