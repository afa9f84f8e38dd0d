#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Weeks of uptime in minutes (issue 33 item 5, docs/FLEET.md "Long runs"): the Uptime workload
# (java-test/bench: a class loader per task, its class and lambdas unloaded after, CPU work and
# allocation) for --seconds (default 600) with the agent pushing every period to a receiver on
# 127.0.0.1 (tests/it/push_receiver.py), and every --every s (default 30): the JVM's RSS,
# Metaspace committed (NMT: metadata and class space), NMT's Class malloc (where HotSpot keeps jmethodIDs),
# classes loaded and unloaded (jstat), and the agent's status: its heap (every fx_alloc block),
# memory= use, and the jmethodIDs its cache holds. Not a CI test: a bench, read by a person.
# --full-gc: a full collection (jcmd GC.run) before each row, so that every unloadable class is
# unloaded and NMT's figures show what stays, not Metaspace's sawtooth; --no-agent: the same JVM
# without the agent (its columns '-'), to tell the agent's share of what stays.
# usage: bench/run_uptime_bench.sh [--build-dir DIR] [--jdk DIR] [--seconds S] [--every S]
#                                  [--opts LIST] [--threads N] [--full-gc] [--no-agent]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
jdk=/usr/lib/jvm/java-17-openjdk-amd64
seconds=600
every=30
extra=
threads=2
full_gc=0
agent=1
while [[ $# -gt 0 ]]; do
    case $1 in
    --build-dir) build=$2; shift 2 ;;
    --jdk) jdk=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --opts) extra=,$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --full-gc) full_gc=1; shift ;;
    --no-agent) agent=0; shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--jdk DIR] [--seconds S] [--every S] [--opts LIST] [--threads N] [--full-gc] [--no-agent]" >&2
       exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
lib=$build/agent/libfxagent.so
jar=$build/java-test/fxagent-bench.jar
[[ -f $lib && -f $jar ]] || { echo "build the agent and fxagent_bench_jar in $build first" >&2; exit 2; }
# shellcheck source=bench/server_lib.sh
source "$root/bench/server_lib.sh" # fx_server_init, cmd, rss_kib
fx_server_init fxuptime
rpid=
trap 'fx_server_cleanup; [[ -n $rpid ]] && kill "$rpid" 2>/dev/null' EXIT

mkdir "$work/recv"
python3 "$root/tests/it/push_receiver.py" "$work/recv" "$work/port" &
rpid=$!
while [[ ! -f $work/port ]]; do sleep 0.1; done
port=$(cat "$work/port")
opts="loop=2s,push=http://127.0.0.1:$port/v1development/profiles,service=uptime,file=$work/up-%n.json.gz,quiet$extra"

echo "### Long run: Uptime, $threads threads, $seconds s"
echo
echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), nproc $(nproc); load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- JDK: $("$jdk/bin/java" -version 2>&1 | head -n 1)"
agent_args=("-agentpath:$lib=$opts")
((agent)) || { opts=none; agent_args=(); }
echo "- Agent: \`$opts\`"
echo "- Command: \`bench/run_uptime_bench.sh --seconds $seconds --every $every --threads $threads${extra:+ --opts ${extra#,}}$( ((full_gc)) && echo " --full-gc")$( ((agent)) || echo " --no-agent")\`"
echo
"$jdk/bin/java" -XX:NativeMemoryTracking=summary -Xmx256m "${agent_args[@]}" -cp "$jar" \
    fxagent.bench.Uptime "seconds=$((seconds + 60))" "threads=$threads" \
    >"$work/jvm.out" 2>"$work/jvm.err" &
pid=$!
sleep 3
echo "| t | RSS MiB | Metaspace committed MiB | NMT Class malloc KiB | classes loaded / unloaded | agent heap KiB | memory= use MiB | method ids cached | pushes received |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
t0=$SECONDS
while true; do
    t=$((SECONDS - t0))
    kill -0 "$pid" 2>/dev/null || { echo "the JVM exited early:" >&2; cat "$work/jvm.err" >&2; exit 1; }
    rss=$(rss_kib)
    ((full_gc)) && "$jdk/bin/jcmd" "$pid" GC.run >/dev/null
    nmt=$("$jdk/bin/jcmd" "$pid" VM.native_memory summary)
    # Metaspace committed: NMT's Metadata and Class space (JDK 17 and 25 print both so)
    meta=$(awk '/Metadata:|Class space:/ {m = 1; next} m && /committed=/ {sub(/.*committed=/, ""); sub(/KB.*/, ""); s += $0; m = 0} END {print s + 0}' <<<"$nmt")
    cls=$(awk '/^- *Class \(/ {c = 1} c && /malloc=/ {sub(/.*malloc=/, ""); sub(/KB.*/, ""); print; exit}' <<<"$nmt")
    lu=$("$jdk/bin/jstat" -class "$pid" | awk 'NR == 2 {print $1 " / " $3}')
    s=-
    ((agent)) && s=$(cmd status)
    heap=$(sed -n 's/.*agent heap \([0-9]*\) KiB.*/\1/p' <<<"$s")
    mem=$(sed -n 's/.*memory \([0-9.]*\) of.*/\1/p' <<<"$s")
    ids=$(sed -n 's/.* \([0-9]*\) method ids cached.*/\1/p' <<<"$s")
    got=$(find "$work/recv" -name 'req-*.json' | wc -l)
    printf '| %d s | %.1f | %.1f | %s | %s | %s | %s | %s | %s |\n' "$t" "$(bc -l <<<"$rss / 1024")" \
        "$(bc -l <<<"${meta:-0} / 1024")" "${cls:-?}" "$lu" "${heap:--}" "${mem:--}" "${ids:--}" "$got"
    rm -f "$work"/recv/req-*.body "$work"/up-*.json.gz # keep the disk flat: counts only
    ((t + every > seconds)) && break
    sleep "$every"
done
echo
((agent)) && echo "Last status: \`$(cmd status | cut -c5-)\`" && echo
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
grep 'uptime:' "$work/jvm.out" | tail -n 1 | sed 's/^/- workload: /'
echo "- Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
