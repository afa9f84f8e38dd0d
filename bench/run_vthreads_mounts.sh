#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 22: what mount tracking costs on a mount-heavy workload (64 virtual threads yielding in a
# tight loop on 2 carriers: every yield is one unmount and one mount). Runs, interleaved ROUNDS
# times: bare, fxagent mode=cpu, fxagent mode=wall (both interval=10ms, so mount events are on),
# and JFR settings=profile; prints each run's process CPU (user+sys, from /proc via GNU time)
# and the workload's mount rate, then the medians.
# VARIANTS (env, space-separated) picks others, to find where the cost goes:
#   probe-none, probe-cap, probe-events  bench/vt_mount_probe.c: a JVMTI environment alone, with
#                                        can_support_virtual_threads, with the mount events on
#                                        and callbacks that only count (built here with cc);
#   cpu0, wall0                          fxagent cpu / wall with vtwait=0 (no wait markers);
#   cpu0t, cpu0p                         cpu0 with engine=timer / engine=perf (auto gives a
#                                        carrier its perf event once it is seen running);
#   cpu0x                                cpu0 with HotSpot's JVMTI mount transitions off
#                                        (-XX:-DoJVMTIVirtualThreadTransitions, experimental);
#   ap                                   async-profiler event=cpu,interval=10ms (ASPROF_LIB: its
#                                        libasyncProfiler.so, built aside);
#   cpuw, wallw                          fxagent cpu / wall with vtwait=10ms (the mount events);
#   base                                 BASE_LIB (env: another libfxagent.so, e.g. main's copied
#                                        aside) mode=cpu,interval=10ms.
# usage: bench/run_vthreads_mounts.sh BUILD_DIR [JDK_HOME] [ROUNDS] [SECONDS]
set -euo pipefail
build=$(cd "$1" && pwd)
jdk=${2:-/usr/lib/jvm/temurin-25-jdk-amd64}
rounds=${3:-5}
secs=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../java-test/vthreads/fxagent/vthreads/VThreadWorkload.java
work=$(mktemp -d /tmp/fx-vtbench.XXXX)
"$jdk/bin/javac" --release 21 -d "$work/classes" "$src"
declare -A cpu rate
read -r -a variants <<<"${VARIANTS:-bare cpu wall jfr}"
if [[ " ${variants[*]} " == *" probe-"* ]]; then
    cc -O2 -shared -fPIC -I"$jdk/include" -I"$jdk/include/linux" -o "$work/probe.so" \
        "$here/vt_mount_probe.c"
fi
lib=$build/agent/libfxagent.so
for ((r = 1; r <= rounds; r++)); do
    for v in "${variants[@]}"; do
        case $v in
        bare) opt=() ;;
        cpu) opt=("-agentpath:$lib=mode=cpu,interval=10ms,quiet,file=$work/c.json.gz") ;;
        wall) opt=("-agentpath:$lib=mode=wall,interval=10ms,quiet,file=$work/w.json.gz") ;;
        cpu0) opt=("-agentpath:$lib=mode=cpu,interval=10ms,vtwait=0,quiet,file=$work/c.json.gz") ;;
        wall0) opt=("-agentpath:$lib=mode=wall,interval=10ms,vtwait=0,quiet,file=$work/w.json.gz") ;;
        cpu0t) opt=("-agentpath:$lib=mode=cpu,interval=10ms,vtwait=0,engine=timer,quiet,file=$work/c.json.gz") ;;
        cpu0p) opt=("-agentpath:$lib=mode=cpu,interval=10ms,vtwait=0,engine=perf,quiet,file=$work/c.json.gz") ;;
        cpu0x) opt=(-XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions
            "-agentpath:$lib=mode=cpu,interval=10ms,vtwait=0,quiet,file=$work/c.json.gz") ;;
        ap) opt=("-agentpath:${ASPROF_LIB:?ASPROF_LIB}=start,event=cpu,interval=10ms,file=$work/ap.jfr") ;;
        cpuw) opt=("-agentpath:$lib=mode=cpu,interval=10ms,vtwait=10ms,quiet,file=$work/c.json.gz") ;;
        wallw) opt=("-agentpath:$lib=mode=wall,interval=10ms,vtwait=10ms,quiet,file=$work/w.json.gz") ;;
        base) opt=("-agentpath:${BASE_LIB:?BASE_LIB}=mode=cpu,interval=10ms,quiet,file=$work/b.json.gz") ;;
        probe-*) opt=("-agentpath:$work/probe.so=${v#probe-}") ;;
        jfr) opt=("-XX:StartFlightRecording=settings=profile,filename=$work/r.jfr") ;;
        *) echo "unknown variant $v" >&2; exit 2 ;;
        esac
        out=$(/usr/bin/time -f "cpu %U %S" "$jdk/bin/java" -Djdk.virtualThreadScheduler.parallelism=2 \
            "${opt[@]}" -cp "$work/classes" fxagent.vthreads.VThreadWorkload mounts "$secs" 2>&1 |
            grep -E "^(mounts|cpu|probe) ")
        [[ $v != probe-events ]] || grep -q "^probe events: [1-9]" <<<"$out" ||
            { echo "probe-events saw no mount event" >&2; exit 1; }
        c=$(awk '/^cpu/ {printf "%.2f", $2 + $3}' <<<"$out")
        m=$(awk '/^mounts/ {print $4}' <<<"$out" | tr -d '/s')
        cpu[$v]+="$c "
        rate[$v]+="$m "
        echo "round $r $v: process CPU ${c} s, mount rate ${m}/s"
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# CPU per mount: each run's process CPU over its mounts, then the median of those.
declare -A per
for v in "${variants[@]}"; do
    read -r -a cs <<<"${cpu[$v]}"
    read -r -a ms <<<"${rate[$v]}"
    for i in "${!cs[@]}"; do
        per[$v]+="$(awk -v c="${cs[$i]}" -v m="${ms[$i]}" -v s="$secs" \
            'BEGIN {printf "%.3f", (m > 0 ? c / (m * s) * 1e6 : 0)}') "
    done
done
for v in "${variants[@]}"; do
    echo "median $v: process CPU $(median <<<"${cpu[$v]}") s, mount rate $(median <<<"${rate[$v]}")/s," \
        "CPU per mount $(median <<<"${per[$v]}") us"
done
rm -rf "$work"
