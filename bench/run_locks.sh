#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cost of lock= on a contended workload (issue 18, docs/BENCHMARKS.md "Lock waits"): LockWorkload
# WORKLOAD (default bench: THREADS threads, one synchronized counter and one ReentrantLock in
# turn, SECONDS each run; storm: the monitor only, ARGS as LockWorkload takes them, e.g. "0 yield"
# for tens of thousands of short contended enters a second) under no agent, fxagent lock=10ms
# (cpu sampling on, as users run it), the same with lockowner=off, JFR with jdk.JavaMonitorEnter
# and jdk.ThreadPark at 10 ms thresholds (nothing else), async-profiler event=lock,lock=10ms when
# ASPROF_LIB names its library, and fxagent lock=10ms from BASE_LIB (another libfxagent.so, e.g.
# before a change) when set; ROUNDS interleaved rounds (the order rotates), the median ops of
# each, and fxagent's meta.extra "Lock waits" of its last run.
# usage: bench/run_locks.sh BUILD_DIR JDK_HOME [ROUNDS] [THREADS] [SECONDS] [WORKLOAD [ARGS...]]
set -euo pipefail
build=$1 jdk=$2 rounds=${3:-5} threads=${4:-4} secs=${5:-5}
shift $(($# < 5 ? $# : 5))
workload=${1:-bench}
shift $(($# < 1 ? $# : 1))
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
    [fx-noowner]="-agentpath:$lib=lock=10ms,lockowner=off,quiet,file=$out/fxoff.json.gz"
    [jfr]="-XX:StartFlightRecording=settings=$jfc,filename=$out/r.jfr"
)
names=(none fxagent fx-noowner jfr)
if [[ -n ${ASPROF_LIB:-} ]]; then
    opts[asprof]="-agentpath:$ASPROF_LIB=start,event=lock,lock=10ms,file=$out/ap.jfr"
    names+=(asprof)
fi
if [[ -n ${BASE_LIB:-} ]]; then
    opts[fx-base]="-agentpath:$BASE_LIB=lock=10ms,quiet,file=$out/fxbase.json.gz"
    names+=(fx-base)
fi
for r in $(seq 1 "$rounds"); do
    for i in "${!names[@]}"; do
        n=${names[$(((i + r) % ${#names[@]}))]}
        # shellcheck disable=SC2086
        ops=$("$jdk/bin/java" ${opts[$n]} -jar "$jar" "$workload" "$threads" "$secs" "$@" \
            2>/dev/null | sed -n 's/^ops //p')
        echo "$n $ops" | tee -a "$out/all"
    done
done
for f in fx fxoff fxbase; do
    [[ -s $out/$f.json.gz ]] || continue
    echo "$f: meta.extra Lock waits of the last run:"
    python3 -c 'import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
for g in d["meta"].get("extra", []):
    if g["label"] == "Lock waits":
        for e in g["entries"]:
            print("   ", e["label"], "=", e["value"])' "$out/$f.json.gz"
done
echo "median ops over $rounds rounds ($workload $threads threads, $secs s $*):"
for n in "${names[@]}"; do
    awk -v n="$n" '$1 == n {print $2}' "$out/all" | sort -n |
        awk -v n="$n" '{a[NR] = $1; all = all " " $1} END {print n, a[int((NR + 1) / 2)], "(" all " )"}'
done
