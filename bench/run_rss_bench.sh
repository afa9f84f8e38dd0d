#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# RSS of a long run at the memory bound (docs/BENCHMARKS.md, "RSS at the bound"): ServerWorkload
# with 200 threads (8 serving at 100 requests/s x 500 us, 192 parked) for --seconds (default
# 600), VmRSS every --every s (default 5); with the agent (mode=wall so that every thread is
# sampled, interval=1ms, memory=--memory, plus --opts) the agent's `status` every 15 s gives the
# model's and the rings' memory. --run none|agent|both (default both: agent first, then none).
# Prints Markdown: one row per 15 s, then peak and steady (mean of the second half) RSS.
# usage: bench/run_rss_bench.sh [--build-dir DIR] [--jdk DIR] [--seconds S] [--every S]
#                               [--memory SIZE] [--opts LIST] [--run none|agent|both]
#                               [--jvm-opts OPTS]
# --jvm-opts (default "-Xms128m -Xmx128m -XX:+AlwaysPreTouch"): a fixed, pre-touched heap, so
# that the Java heap's own growth does not hide the agent's memory in the comparison.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
jdk=/usr/lib/jvm/java-17-openjdk-amd64
seconds=600
every=5
memory=64m
extra=
jvm_opts="-Xms128m -Xmx128m -XX:+AlwaysPreTouch"
runs=both
while [[ $# -gt 0 ]]; do
    case $1 in
    --build-dir) build=$2; shift 2 ;;
    --jdk) jdk=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --opts) extra=,$2; shift 2 ;;
    --run) runs=$2; shift 2 ;;
    --jvm-opts) jvm_opts=$2; shift 2 ;;
    *) echo "usage: $0 [--build-dir DIR] [--jdk DIR] [--seconds S] [--every S] [--memory SIZE] [--opts LIST] [--run none|agent|both] [--jvm-opts OPTS]" >&2
       exit 2 ;;
    esac
done
[[ $runs == both ]] && runs="agent none"
build=$(cd "$build" && pwd)
lib=$build/agent/libfxagent.so
jar=$build/java-test/fxagent-server.jar
[[ -f $lib && -f $jar ]] || { echo "build the agent and fxagent_server_jar in $build first" >&2; exit 2; }
# shellcheck source=bench/server_lib.sh
source "$root/bench/server_lib.sh"
fx_server_init fxrssbench
# shellcheck disable=SC2206 # word splitting of the JVM options is intended
jvm_args=($jvm_opts)

echo "### RSS over $seconds s, 200 threads, memory=$memory"
echo
echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), nproc $(nproc); load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- JDK: $("$jdk/bin/java" -version 2>&1 | head -n 1)"
echo "- Command: \`bench/run_rss_bench.sh --seconds $seconds --every $every --memory $memory${extra:+ --opts ${extra#,}} --run \"$runs\" --jvm-opts \"$jvm_opts\"\`"
echo
for run in $runs; do
    opts=
    [[ $run == agent ]] && opts="mode=wall,interval=1ms,memory=$memory,file=$work/rss-%n.json.gz,quiet$extra"
    start_jvm "$run" "$opts" --threads 8 --rate 100 --work-us 500 --idle-threads 192 \
        --seconds $((seconds + 600))
    echo "#### $run${opts:+ ($opts)}"
    echo
    if [[ $run == agent ]]; then
        echo "| t | RSS | status (memory of bound; tables, rings; samples held; dropped) |"
        echo "| ---: | ---: | --- |"
    else
        echo "| t | RSS |"
        echo "| ---: | ---: |"
    fi
    max=0 sum=0 n=0 t0=$SECONDS
    while true; do
        t=$((SECONDS - t0))
        ((t > seconds)) && break
        kib=$(rss_kib)
        ((kib > max)) && max=$kib
        if ((t * 2 >= seconds)); then
            sum=$((sum + kib))
            n=$((n + 1))
        fi
        echo "$t $kib" >>"$work/$run.rss"
        if ((t % 15 < every)); then
            if [[ $run == agent ]]; then
                s=$(cmd status)
                st=$(sed -n 's/.*memory \(.* MiB (tables .* MiB)\), \([0-9]*\) dropped.*/\1; \2 dropped/p' <<<"$s")
                held=$(sed -n 's/.* (\([0-9]*\) in memory).*/\1/p' <<<"$s")
                printf '| %d s | %.1f MiB | %s; %s held |\n' "$t" "$(bc -l <<<"$kib / 1024")" "$st" "$held"
            else
                printf '| %d s | %.1f MiB |\n' "$t" "$(bc -l <<<"$kib / 1024")"
            fi
        fi
        sleep "$every"
    done
    echo
    [[ $run == agent ]] && echo "Last status: \`$(cmd status | cut -c5-)\`" && echo
    printf -- '- %s: peak RSS %.1f MiB, steady (mean of the second half) %.1f MiB\n\n' "$run" \
        "$(bc -l <<<"$max / 1024")" "$(bc -l <<<"$sum / ($n * 1024)")"
    stop_jvm
done
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
