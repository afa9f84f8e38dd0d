#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 22: what mount tracking costs on a mount-heavy workload (64 virtual threads yielding in a
# tight loop on 2 carriers: every yield is one unmount and one mount). Runs, interleaved ROUNDS
# times: bare, fxagent mode=cpu, fxagent mode=wall (both interval=10ms, so mount events are on),
# and JFR settings=profile; prints each run's process CPU (user+sys, from /proc via GNU time)
# and the workload's mount rate, then the medians.
# usage: bench/run_vthreads_mounts.sh BUILD_DIR [JDK_HOME] [ROUNDS] [SECONDS]
set -euo pipefail
build=$(cd "$1" && pwd)
jdk=${2:-/usr/lib/jvm/temurin-25-jdk-amd64}
rounds=${3:-5}
secs=${4:-5}
src=$(cd "$(dirname "$0")/.." && pwd)/java-test/vthreads/fxagent/vthreads/VThreadWorkload.java
work=$(mktemp -d /tmp/fx-vtbench.XXXX)
"$jdk/bin/javac" --release 21 -d "$work/classes" "$src"
declare -A cpu rate
variants=(bare cpu wall jfr)
for ((r = 1; r <= rounds; r++)); do
    for v in "${variants[@]}"; do
        case $v in
        bare) opt=() ;;
        cpu) opt=("-agentpath:$build/agent/libfxagent.so=mode=cpu,interval=10ms,quiet,file=$work/c.json.gz") ;;
        wall) opt=("-agentpath:$build/agent/libfxagent.so=mode=wall,interval=10ms,quiet,file=$work/w.json.gz") ;;
        jfr) opt=("-XX:StartFlightRecording=settings=profile,filename=$work/r.jfr") ;;
        esac
        out=$(/usr/bin/time -f "cpu %U %S" "$jdk/bin/java" -Djdk.virtualThreadScheduler.parallelism=2 \
            "${opt[@]}" -cp "$work/classes" fxagent.vthreads.VThreadWorkload mounts "$secs" 2>&1 |
            grep -E "^(mounts|cpu) ")
        c=$(awk '/^cpu/ {printf "%.2f", $2 + $3}' <<<"$out")
        m=$(awk '/^mounts/ {print $4}' <<<"$out" | tr -d '/s')
        cpu[$v]+="$c "
        rate[$v]+="$m "
        echo "round $r $v: process CPU ${c} s, mount rate ${m}/s"
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for v in "${variants[@]}"; do
    echo "median $v: process CPU $(median <<<"${cpu[$v]}") s, mount rate $(median <<<"${rate[$v]}")/s"
done
rm -rf "$work"
