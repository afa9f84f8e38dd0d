#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cost of dumps and the memory bound, measured on a real JVM (docs/BENCHMARKS.md, "Dumps"):
#  1. dump time of a recording of at least --samples samples (default 1,000,000): ServerWorkload
#     with --idle-threads parked threads under mode=wall,interval=1ms fills the model; three
#     dumps by jcmd; each reply gives the file, its size, the write time and the drain's pause to
#     copy the model (the only time the drain stops emptying rings);
#  2. the workload's request latency (p50/p99/p999/max, open-loop) in three runs of --seconds:
#     no agent; then --pairs times (default 3), alternating: the agent (wall, 1 ms, idle
#     threads) without dumps, and the same with a jcmd dump every --every seconds of the whole,
#     growing recording;
#  3. RSS over --rss-seconds (default 180) at 1 ms with 200 threads (8 serving, 192 parked;
#     mode=wall so that every thread is sampled) and memory=64m: VmRSS every 5 s, the model's
#     memory and the samples dropped by the bound from `status` every 15 s.
# Prints Markdown for docs/BENCHMARKS.md. Needs a build with the agent and fxagent-server.jar.
# usage: bench/run_dump_bench.sh [--build-dir DIR] [--jdk DIR] [--samples N] [--seconds S]
#                                [--every S] [--rss-seconds S] [--idle-threads N] [--pairs N]
#                                [--parts 123]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
jdk=/usr/lib/jvm/java-17-openjdk-amd64
samples=1000000
seconds=60
every=5
rss_seconds=180
idle=100
pairs=3
parts=123
while [[ $# -gt 0 ]]; do
    case $1 in
    --build-dir) build=$2; shift 2 ;;
    --jdk) jdk=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --rss-seconds) rss_seconds=$2; shift 2 ;;
    --idle-threads) idle=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --parts) parts=$2; shift 2 ;;
    *) echo "usage: $0 [--build-dir DIR] [--jdk DIR] [--samples N] [--seconds S] [--every S] [--rss-seconds S] [--idle-threads N] [--pairs N] [--parts 123]" >&2
       exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
lib=$build/agent/libfxagent.so
jar=$build/java-test/fxagent-server.jar
[[ -f $lib && -f $jar ]] || { echo "build the agent and fxagent_server_jar in $build first" >&2; exit 2; }
# shellcheck source=bench/server_lib.sh
source "$root/bench/server_lib.sh"
fx_server_init fxdumpbench
jvm_args=(-XX:CompileCommand=quiet "-XX:CompileCommand=dontinline,fxagent.test.ServerWorkload::hotChecksum")
declare -A row

held() {
    cmd status | sed -n 's/.* (\([0-9]*\) in memory).*/\1/p'
}

rss_mib() {
    awk -v kib="$(rss_kib)" 'BEGIN {printf "%.1f", kib / 1024}'
}

echo "### Machine"
echo
echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), nproc $(nproc); load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- JDK: $("$jdk/bin/java" -version 2>&1 | head -n 1); agent: $lib"
echo "- Command: \`bench/run_dump_bench.sh --samples $samples --seconds $seconds --every $every --rss-seconds $rss_seconds --idle-threads $idle --pairs $pairs --parts $parts\`"
echo

if [[ $parts == *1* ]]; then
    echo "### Dump time of a large recording"
    echo
    start_jvm big "mode=wall,interval=1ms,memory=1g,file=$work/big-%n.json.gz" \
        --threads 2 --idle-threads "$idle" --seconds 3600
    t0=$SECONDS
    while (($(held) < samples)); do
        sleep 5
    done
    echo "Filled to $(held) samples in memory in $((SECONDS - t0)) s (wall mode, $((idle + 2)) threads + JVM threads, 1 ms)."
    echo
    echo "| dump | samples in the file | file | write | drain paused (copy) |"
    echo "| --- | ---: | ---: | ---: | ---: |"
    for i in 1 2 3; do
        r=$(cmd dump)
        n=$(sed -n 's/.*wrote \([0-9]*\) samples.*/\1/p' <<<"$r")
        bytes=$(sed -n 's/.*(\([0-9]*\) bytes in.*/\1/p' <<<"$r")
        ms=$(sed -n 's/.* bytes in \([0-9]*\) ms.*/\1/p' <<<"$r")
        copy=$(sed -n 's/.*copied in \([0-9]*\) ms.*/\1/p' <<<"$r")
        printf '| %d | %d | %.1f MB | %d ms | %d ms |\n' "$i" "$n" "$(bc -l <<<"$bytes / 1000000")" \
            "$ms" "$copy"
    done
    echo
    echo "Status after the dumps: \`$(cmd status | cut -c5-)\`"
    echo
    stop_jvm
fi

if [[ $parts == *2* ]]; then
    echo "### Request latency with and without dumps"
    echo
    echo "ServerWorkload --threads 4 --rate 200 --work-us 500 (open loop, ~40 % of a core), $seconds s per run;"
    echo "agent runs: mode=wall,interval=1ms with $idle parked threads, so the recording grows all along;"
    echo "\"dumps\" adds a jcmd dump of the whole recording every $every s. Runs alternate (agent, dumps,"
    echo "agent, ...) so that the machine's load drifts over both alike."
    echo
    echo "| run | requests | late | p50 | p99 | p99.9 | max |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    runs=(none)
    for ((i = 0; i < pairs; i++)); do
        runs+=(agent dumps)
    done
    for run in "${runs[@]}"; do
        opts=
        [[ $run != none ]] && opts="mode=wall,interval=1ms,memory=1g,file=$work/lat-%n.json.gz,quiet"
        start_jvm "lat-$run" "$opts" --threads 4 --rate 200 --work-us 500 \
            --idle-threads "$idle" --seconds 3600
        dumps=0
        end=$((SECONDS + seconds))
        while ((SECONDS < end)); do
            sleep "$every"
            if [[ $run == dumps ]]; then
                cmd "dump,quiet" >"$work/lastdump"
                dumps=$((dumps + 1))
            fi
        done
        stop_jvm
        line=$(grep '^requests=' "$work/lat-$run.out")
        get() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$line"; }
        label=$run
        [[ $run == dumps ]] && label="dumps ($dumps, the last of $(sed -n 's/.*wrote \([0-9]*\) samples.*/\1/p' "$work/lastdump") samples)"
        printf '| %s | %d | %d | %d us | %d us | %d us | %d us |\n' "$label" "$(get requests)" \
            "$(get late)" "$(get p50_us)" "$(get p99_us)" "$(get p999_us)" "$(get max_us)"
    done
    echo
fi

if [[ $parts == *3* ]]; then
    echo "### RSS with memory=64m over $rss_seconds s"
    echo
    echo "200 threads (8 serving at 100 requests/s x 500 us, 192 parked), mode=wall,interval=1ms,memory=64m;"
    echo "then the same workload without the agent, for the JVM's own growth (Java heap, JIT, metaspace)."
    echo
    declare -A base
    for run in agent none; do
        opts=
        [[ $run == agent ]] && opts="mode=wall,interval=1ms,memory=64m,file=$work/rss-%n.json.gz,quiet"
        start_jvm "rss-$run" "$opts" --threads 8 --rate 100 --work-us 500 --idle-threads 192 \
            --seconds 3600
        max=0
        for ((t = 0; t <= rss_seconds; t += 5)); do
            rss=$(rss_mib)
            (($(printf '%.0f' "$rss") > max)) && max=$(printf '%.0f' "$rss")
            if ((t % 15 == 0)); then
                if [[ $run == agent ]]; then
                    s=$(cmd status)
                    row[$t]="$rss MiB | $(sed -n 's/.* memory \([0-9.]*\) of .*/\1/p' <<<"$s") MiB | $(
                        sed -n 's/.* (\([0-9]*\) in memory).*/\1/p' <<<"$s") | $(
                        sed -n 's/.* \([0-9]*\) dropped by the bound.*/\1/p' <<<"$s")"
                else
                    base[$t]="$rss MiB"
                fi
            fi
            sleep 5
        done
        if [[ $run == agent ]]; then
            last=$(cmd status | cut -c5-)
            dump=$(cmd dump)
            max_agent=$max
        else
            max_none=$max
        fi
        stop_jvm
    done
    echo "| t | RSS with the agent | model memory | samples in memory | dropped by the bound | RSS without |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
    for ((t = 0; t <= rss_seconds; t += 15)); do
        echo "| ${t} s | ${row[$t]} | ${base[$t]} |"
    done
    echo
    echo "Highest RSS seen: $max_agent MiB with the agent, $max_none MiB without. Last status: \`$last\`"
    echo "A dump at the end: \`${dump#ok: }\`"
    echo
fi
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
