#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cost of lock= on a contended workload (issue 18, docs/BENCHMARKS.md "Lock waits"): LockWorkload
# bench (THREADS threads, one synchronized counter and one ReentrantLock in turn, SECONDS each
# run) under no agent, fxagent lock=10ms (cpu sampling on, as users run it), JFR with
# jdk.JavaMonitorEnter and jdk.ThreadPark at 10 ms thresholds (nothing else), and async-profiler
# event=lock,lock=10ms when ASPROF_LIB names its library; ROUNDS interleaved rounds, the median
# ops of each.
# usage: bench/run_locks.sh BUILD_DIR JDK_HOME [ROUNDS] [THREADS] [SECONDS]
set -euo pipefail
build=$1 jdk=$2 rounds=${3:-5} threads=${4:-4} secs=${5:-5}
jar=$build/java-test/fxagent-locks.jar lib=$build/agent/libfxagent.so
out=$(mktemp -d)
jfc=$out/locks.jfc
cat >"$jfc" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0">
  <event name="jdk.JavaMonitorEnter"><setting name="enabled">true</setting><setting name="stackTrace">true</setting><setting name="threshold">10 ms</setting></event>
  <event name="jdk.ThreadPark"><setting name="enabled">true</setting><setting name="stackTrace">true</setting><setting name="threshold">10 ms</setting></event>
</configuration>
XML
declare -A opts=(
    [none]=""
    [fxagent]="-agentpath:$lib=lock=10ms,quiet,file=$out/fx.json.gz"
    [jfr]="-XX:StartFlightRecording=settings=$jfc,filename=$out/r.jfr"
)
names=(none fxagent jfr)
if [[ -n ${ASPROF_LIB:-} ]]; then
    opts[asprof]="-agentpath:$ASPROF_LIB=start,event=lock,lock=10ms,file=$out/ap.jfr"
    names+=(asprof)
fi
for r in $(seq 1 "$rounds"); do
    for n in "${names[@]}"; do
        # shellcheck disable=SC2086
        ops=$("$jdk/bin/java" ${opts[$n]} -jar "$jar" bench "$threads" "$secs" 2>/dev/null |
            sed -n 's/^ops //p')
        echo "$n $ops" | tee -a "$out/all"
    done
done
echo "median ops over $rounds rounds ($threads threads, $secs s):"
for n in "${names[@]}"; do
    awk -v n="$n" '$1 == n {print $2}' "$out/all" | sort -n |
        awk -v n="$n" '{a[NR] = $1} END {print n, a[int((NR + 1) / 2)]}'
done
