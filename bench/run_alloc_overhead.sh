#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cost of allocation sampling (issue 17, docs/BENCHMARKS.md "Allocation sampling"): the
# allocation-heavy loop of java-test/alloc (AllocWorkload rounds N: 1.3 GB per 3000 rounds of
# byte[8], byte[2000], byte[200000]) under no profiler, fxagent cpu 10 ms without and with
# alloc=512k, JFR with only jdk.ObjectAllocationSample (its profile.jfc throttle, 150/s), and
# async-profiler event=alloc,alloc=512k when FXAGENT_BENCH_ASYNC_PROFILER names its
# libasyncProfiler.so; interleaved round-robin, REPS rounds; prints the median process CPU (the
# JVM's own OperatingSystemMXBean figure) and wall time, and their ratios to no profiler.
# usage: bench/run_alloc_overhead.sh BUILD_DIR JDK_HOME [REPS] [ROUNDS]
set -euo pipefail
build=$1 jdk=$2 reps=${3:-7} rounds=${4:-6000}
jar=$build/java-test/fxagent-alloc.jar agent=$build/agent/libfxagent.so
tmp=$(mktemp -d -t fxalloc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/alloc.jfc" <<'JFC'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0">
  <event name="jdk.ObjectAllocationSample">
    <setting name="enabled">true</setting>
    <setting name="throttle">150/s</setting>
    <setting name="stackTrace">true</setting>
  </event>
</configuration>
JFC
declare -A opts=(
    [none]=""
    [fx-cpu]="-agentpath:$agent=file=$tmp/fx-cpu.json.gz,quiet"
    [fx-cpu+alloc512k]="-agentpath:$agent=alloc=512k,file=$tmp/fx-alloc.json.gz,quiet"
    [jfr-alloc-sample]="-XX:StartFlightRecording=settings=$tmp/alloc.jfc,filename=$tmp/a.jfr"
)
configs=(none fx-cpu fx-cpu+alloc512k jfr-alloc-sample)
if [[ -n "${FXAGENT_BENCH_ASYNC_PROFILER:-}" ]]; then
    opts[ap-alloc512k]="-agentpath:$FXAGENT_BENCH_ASYNC_PROFILER=start,event=alloc,alloc=512k,file=$tmp/ap.jfr"
    configs+=(ap-alloc512k)
fi
for ((r = 1; r <= reps; r++)); do
    for c in "${configs[@]}"; do
        start=$(date +%s%N)
        # shellcheck disable=SC2086
        line=$("$jdk/bin/java" ${opts[$c]} -cp "$jar" fxagent.alloc.AllocWorkload rounds "$rounds" 2>/dev/null | tail -n 1)
        wall=$(( $(date +%s%N) - start ))
        echo "$c ${line##* } $wall" >>"$tmp/results"
    done
done
python3 - "$tmp/results" "${configs[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {c: (statistics.median(int(r[1]) for r in rows if r[0] == c) / 1e6,
           statistics.median(int(r[2]) for r in rows if r[0] == c) / 1e6) for c in sys.argv[2:]}
base = med["none"]
print("| configuration | process CPU (ms, median) | CPU / none | wall (ms, median) | wall / none |")
print("| --- | ---: | ---: | ---: | ---: |")
for c, (cpu, wall) in med.items():
    print(f"| {c} | {cpu:.0f} | {cpu / base[0]:.2f} | {wall:.0f} | {wall / base[1]:.2f} |")
PY
