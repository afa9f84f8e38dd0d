#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 22 item 4: what recording virtual threads' waits (vtwait=) costs. Two workloads:
# "mounts" (64 virtual threads yielding: every unmount is timed, no wait reaches 10 ms) and
# "sleepers" (2000 virtual threads sleeping 10 ms at a time: ~150k waits/s, all >= vtwait=, so
# the rate limit decides). Each under fxagent interval=10ms: mode=cpu with vtwait=0 (its default)
# and vtwait=10ms, mode=wall with vtwait=0 and with its default (1ms, issue 30 item 5), and bare;
# interleaved ROUNDS times; prints process CPU (user+sys) and the workload's rate, then medians.
# usage: bench/run_vthreads_waits.sh BUILD_DIR [JDK_HOME] [ROUNDS] [SECONDS]
set -euo pipefail
read -r build jdk rounds secs <<<"$(cd "$1" && pwd) ${2:-/usr/lib/jvm/temurin-25-jdk-amd64} ${3:-5} ${4:-5}"
work=$(mktemp -d /tmp/fx-vtwait.XXXX)
"$jdk/bin/javac" --release 21 -d "$work/classes" \
    "$(dirname "$0")/../java-test/vthreads/fxagent/vthreads/VThreadWorkload.java"
agent="-agentpath:$build/agent/libfxagent.so=interval=10ms,quiet,file=$work/p.json.gz"
declare -A cpu
keys=()
for ((r = 1; r <= rounds; r++)); do
    for wl in mounts sleepers; do
        for v in bare vtwait0 vtwait10ms wall-vtwait0 wall-default; do
            case $v in
            bare) opt=() ;;
            vtwait0) opt=("$agent,mode=cpu,vtwait=0") ;;
            vtwait10ms) opt=("$agent,mode=cpu,vtwait=10ms") ;;
            wall-vtwait0) opt=("$agent,mode=wall,vtwait=0") ;;
            wall-default) opt=("$agent,mode=wall") ;;
            esac
            case $wl in
            mounts) args=(mounts "$secs") ;;
            sleepers) args=(sleepers 2000 "$secs") ;;
            esac
            out=$(/usr/bin/time -f "cpu %U %S" "$jdk/bin/java" -Djdk.virtualThreadScheduler.parallelism=2 \
                "${opt[@]}" -cp "$work/classes" fxagent.vthreads.VThreadWorkload "${args[@]}" 2>&1 |
                grep -E "^(mounts|waits|cpu) ")
            c=$(awk '/^cpu/ {printf "%.2f", $2 + $3}' <<<"$out")
            k="$wl $v"
            [[ $r -eq 1 ]] && keys+=("$k")
            cpu[$k]+="$c "
            echo "round $r $k: process CPU ${c} s, $(grep -E '^(mounts|waits)' <<<"$out")"
        done
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for k in "${keys[@]}"; do
    echo "median $k: process CPU $(median <<<"${cpu[$k]}") s"
done
rm -rf "$work"
