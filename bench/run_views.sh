#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every view priced in one interleaved run (issue 31, docs/BENCHMARKS.md "Every view priced"):
# no profiler, fxagent defaults, + alloc=512k, + lock=10ms, all together, JFR settings=profile,
# and async-profiler event=cpu and event=cpu,alloc,lock when FXAGENT_BENCH_ASYNC_PROFILER names
# its libasyncProfiler.so (built outside the repository); on a CPU, an allocation and a lock
# workload (and javac with --workloads cpu,alloc,lock,javac), per JDK; the JVM's own CPU time,
# medians of interleaved rounds, the load average beside each figure (bench/views_overhead.py).
#   FXAGENT_BENCH_ASYNC_PROFILER=/path/libasyncProfiler.so bench/run_views.sh --rounds 5
# usage: bench/run_views.sh [--build-dir DIR] [--out DIR] [--no-build] [--jdk HOME]...
#        [views_overhead.py options: --rounds N --workloads W,.. --configs C,.. --cpu-rounds N
#        --alloc-rounds N --lock-seconds S --javac-files N --javac-configs C,.. --jvm-flags "OPTS"]
# --jvm-flags "-Xbatch -XX:+UseSerialGC -Xms256m -Xmx256m": batch compilation and a fixed serial
# heap in every run (docs/BENCHMARKS.md "Every view priced: the quiet run (session 17)", run D).
# The defaults one at a time: --configs none,fx,fx-kstack-no,fx-markers-off,fx-cstack-fp,fx-cstack-no
# JDKs: FXAGENT_TEST_JDKS (colon-separated homes) or every JDK in /usr/lib/jvm, as the tests do.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-overhead
out=
build_it=1
jdk_args=()
py_args=()
while [[ $# -gt 0 ]]; do
    case $1 in
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-build) build_it=0; shift ;;
    --jdk) jdk_args+=("$2"); shift 2 ;;
    --rounds | --workloads | --configs | --cpu-rounds | --alloc-rounds | --lock-seconds | \
        --javac-files | --javac-configs | --jvm-flags | --src-zip)
        py_args+=("$1" "$2"); shift 2 ;;
    *) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
[[ -n "$out" ]] || out=$(mktemp -d /tmp/fxbench-views.XXXXXX)
if [[ $build_it -eq 1 ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j2 --target fxagent fxagent_bench_jar fxagent_alloc_jar \
        fxagent_locks_jar >/dev/null
fi
# shellcheck source=../tests/it/jdks.sh
source "$root/tests/it/jdks.sh"
fx_jdk_specs "${jdk_args[@]}"
if [[ ${#FX_JDK_SPECS[@]} -eq 0 ]]; then
    echo "run_views.sh: no usable JDK found (set FXAGENT_TEST_JDKS or use --jdk)" >&2
    exit 1
fi
echo "run_views.sh: results in $out (load average now: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
exec python3 "$root/bench/views_overhead.py" --build "$build" --out "$out" "${FX_JDK_SPECS[@]}" \
    "${py_args[@]}"
