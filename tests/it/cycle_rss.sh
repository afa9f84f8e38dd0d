#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a stopped agent leaves in RSS (issue 23; docs/PRODUCTION.md, "What stays after a stop").
# Not a CTest test: a measurement, run by hand. Two JVMs run CycleWorkload side by side for
# 25 s (their own JIT growth is over by then); one is then profiled CYCLES times by fxprof
# (cpu, wall, itimer in turn; 1-10 ms; depth 64-4096; 0.3 s each), the other is left alone (the
# control: the JVM's own growth over the same time). Both have -XX:NativeMemoryTracking=summary,
# so the JVM's own native growth (JVMTI's per-method and per-thread state included) is told
# apart from what malloc holds for the agent. With gdb, glibc's malloc_stats() of the cycled JVM
# is printed to its stderr (DIR/cyc.err) before the first start and at the end, and a
# malloc_trim(0) at the end shows how much of the rest is free memory glibc kept.
# usage: cycle_rss.sh JDK_HOME BUILD_DIR OUT_DIR [CYCLES]   (BUILD_DIR: the cmake build)
set -euo pipefail
jdk=$1 build=$2 out=$3 cycles=${4:-40}
jar=$build/java-test/fxagent-server.jar fxprof=$build/cli/fxprof lib=$build/agent/libfxagent.so
rm -rf "$out"
mkdir -p "$out"
cd "$out"
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done' EXIT

start_jvm() {
    echo 0 >"$1.phase"
    "$jdk/bin/java" -Xms64m -Xmx64m -XX:+AlwaysPreTouch -XX:NativeMemoryTracking=summary \
        -cp "$jar" fxagent.test.CycleWorkload --workers 2 --phase "$out/$1.phase" \
        --ack "$out/$1.ack" --ready "$out/$1.ready" --stop "$out/$1.stop" >"$1.out" 2>"$1.err" &
    pids+=("$!")
}
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }
anon() { sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }
gdb_call() {
    command -v gdb >/dev/null || return 0
    gdb -p "$1" -batch -ex "handle SIGSEGV nostop noprint pass" -ex "call $2" >/dev/null 2>&1 || true
}

start_jvm cyc
start_jvm ctl
cyc=${pids[0]} ctl=${pids[1]}
sleep 25
"$jdk/bin/jcmd" "$cyc" VM.native_memory baseline >/dev/null
"$jdk/bin/jcmd" "$ctl" VM.native_memory baseline >/dev/null
echo "== before the first start" >>cyc.err
gdb_call "$cyc" "(void)malloc_stats()"
r0=$(rss "$cyc") a0=$(anon "$cyc") c0=$(rss "$ctl")
modes=(cpu wall itimer) ivs=(1 2 5 10) depths=(64 1024 4096)
for ((i = 1; i <= cycles; i++)); do
    "$fxprof" start "$cyc" -m "${modes[i % 3]}" -i "${ivs[i % 4]}ms" -o "$out/r.json.gz" \
        --options "depth=${depths[i % 3]}" --agent "$lib" >/dev/null
    sleep 0.3
    "$fxprof" stop "$cyc" --agent "$lib" >/dev/null
    echo "stop $i: RSS $(rss "$cyc") KiB" >>rss.log
done
sleep 2
r1=$(rss "$cyc") a1=$(anon "$cyc") c1=$(rss "$ctl")
"$jdk/bin/jcmd" "$cyc" VM.native_memory summary.diff >nmt-cycled.txt
"$jdk/bin/jcmd" "$ctl" VM.native_memory summary.diff >nmt-control.txt
echo "== at the end" >>cyc.err
gdb_call "$cyc" "(void)malloc_stats()"
gdb_call "$cyc" "(int)malloc_trim(0)"
r2=$(rss "$cyc")
nmt() { sed -n 's/^Total: .*committed=[0-9]*KB \([+-][0-9]*KB\).*/\1/p' "$1"; }
"$fxprof" status "$cyc" --agent "$lib"
echo "cycled JVM: RSS before the first start $r0 KiB, after $cycles cycles $r1 KiB ($((r1 - r0)) KiB; anonymous $((a1 - a0)) KiB); after a malloc_trim(0) by gdb $r2 KiB ($((r2 - r0)) KiB)"
echo "control JVM: RSS $c0 KiB, then $c1 KiB ($((c1 - c0)) KiB)"
echo "JVM native memory (NMT, committed) since before the first start: cycled $(nmt nmt-cycled.txt), control $(nmt nmt-control.txt)"
if command -v gdb >/dev/null; then
    echo "glibc malloc, all arenas (before -> at the end): $(grep -A2 '^Total' cyc.err |
        awk '/system bytes/ {s[++n] = $4} /in use bytes/ {u[++m] = $5}
             END {printf "system %d -> %d KiB, in use %d -> %d KiB", s[1]/1024, s[2]/1024, u[1]/1024, u[2]/1024}')"
fi
touch cyc.stop ctl.stop
wait
