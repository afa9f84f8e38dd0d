#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One long-lived JVM profiled again and again (issue 23): CycleWorkload (2 busy workers, a
# short-lived thread started every 20 ms) under N start/stop cycles by fxprof, each with other
# options: mode cpu, wall, itimer in turn, interval 1..50 ms, depth 64..4096, ring 64k..1m,
# engine and markers now and then, lock=1ms,alloc=512k in every third cycle (0 in the others:
# each start's line names them only when on). Each cycle's workload phase differs from the
# last, and each recording is checked (cycle_check.py): no frame of the other phase (no sample of one
# recording in the next), the hot method's share 75 % within a bound, and meta.extra's figures
# are the recording's own (issue 23: a start resets them). Also:
#   * stopped means idle: over STOP_S seconds of being stopped, the agent's threads take no CPU
#     time and no context switch (/proc/PID/task/*/schedstat, status), and the agent counted
#     no SIGPROF since the stop (status: "0 signals since the stop"); no POSIX timer is left;
#   * races: two fxprof clients at once (status and dump, or two dumps, while running), a stop
#     racing a loop= dump: each gets one answer and a valid file, nothing hangs;
#   * a stop frees the recording once written: a dump while stopped is refused (the agent's
#     return code 2, fxprof's exit code 1; one line: "nothing to dump: the recording was
#     written at stop to FILE; start again to record");
#   * at the end, after the last stop: threads, file descriptors, POSIX timers and the model's
#     tracks (status) back to what they were after a warm-up stop (the 10th, or a third of the
#     cycles); the agent's own heap
#     and pages (status, counted by fx_alloc) within FXAGENT_CYCLE_HEAP_KIB (256 KiB) of it
#     and below FXAGENT_CYCLE_HEAP_STOPPED_KIB (4 MiB); what the stopped agent keeps (that
#     count less the unwind tables: no event queue, no model) at most FXAGENT_CYCLE_HELD_KIB
#     (384 KiB); the RSS split (cycle_mem.sh: the JVM's
#     NMT, the agent's count, malloc neither counts, the rest), each reading after the JVM's
#     own System.trim_native_heap: malloc in use that neither NMT nor the agent counts within
#     FXAGENT_CYCLE_MALLOC_KIB of the warm-up stop's, the anonymous RSS that neither holds
#     within FXAGENT_CYCLE_RSS_KIB of it and within FXAGENT_CYCLE_FIRST_KIB of before the first
#     start (read 20 s into the JVM's life, when its own JIT growth is mostly over): the JVM's
#     own growth (megabytes, NMT) is out of all three; the JVM exits 0, no hs_err.
# usage: cycle_test.sh JDK_HOME [CYCLES]  (FXAGENT_CYCLES overrides CYCLES; the issue's full run
#        is FXAGENT_CYCLES=1000, and FXAGENT_CYCLE_STOP_S=60 for a minute of being stopped;
#        FXAGENT_JVM_PRELOAD preloads a library into the JVM only, e.g. libasan;
#        FXAGENT_CYCLE_MEM_WAIT=0 when the RSS and malloc bounds are off (san.asan_cycle): no
#        20 s warm-up before the first reading and one reading each, not the settled least;
#        FXAGENT_CYCLE_CONTROL=1 runs a control JVM without the agent beside it, cycle_mem.sh)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.cycle.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_SERVER_JAR
cycles=${FXAGENT_CYCLES:-${2:-30}}
stop_s=${FXAGENT_CYCLE_STOP_S:-3}
rss_bound_kib=${FXAGENT_CYCLE_RSS_KIB:-8192}
rss_first_kib=${FXAGENT_CYCLE_FIRST_KIB:-16384}
malloc_bound_kib=${FXAGENT_CYCLE_MALLOC_KIB:-512}
heap_growth_kib=${FXAGENT_CYCLE_HEAP_KIB:-256}
heap_stopped_kib=${FXAGENT_CYCLE_HEAP_STOPPED_KIB:-4096}
held_kib=${FXAGENT_CYCLE_HELD_KIB:-384}
# The waits that make the RSS and malloc readings hold to their bounds (the JVM's own growth
# over, settled readings); san.asan_cycle sets the bounds to 4 GiB and the waits to 0 (~10-14 s
# of each JDK's run there, in a test that holds both cores: PROCESSORS 2).
mem_wait=${FXAGENT_CYCLE_MEM_WAIT:-1}
[[ -x ${FXPROF:-} ]] || it_fail "FXPROF is not set to the fxprof binary"
run=$FXAGENT_RUN_DIR
PID="" CTL=""
source "$IT_DIR/cycle_mem.sh"

cleanup() {
    [[ -n $PID ]] && kill -9 "$PID" 2>/dev/null
    [[ -n $CTL ]] && kill -9 "$CTL" 2>/dev/null
    true
}
trap cleanup EXIT

echo 0 >phase
# FXAGENT_JVM_PRELOAD: a library the JVM alone preloads (libasan for an ASan agent, san.asan_cycle).
jvm_env=()
[[ -n ${FXAGENT_JVM_PRELOAD:-} ]] && jvm_env=(env "LD_PRELOAD=$FXAGENT_JVM_PRELOAD")
# DebugNonSafepoints: the workers' loop is compiled before the first start (an attach); with it
# HotSpot keeps debug information at every pc there too. AsyncGetCallTrace still named a method
# of the other phase, inlined into the same loop, once in ~300 recordings on JDK 25:
# cycle_check.py counts such an isolated sample apart (docs/PRODUCTION.md, "Caveats of a late
# attach"). Compiling each phase's loop on its own instead moved 98 % of one recording's cold
# samples onto the hot method (JDK 17): not done.
"${jvm_env[@]}" "$IT_JDK/bin/java" -Xms64m -Xmx64m -XX:+AlwaysPreTouch \
    -XX:NativeMemoryTracking=summary -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp "$FXAGENT_SERVER_JAR" \
    fxagent.test.CycleWorkload --workers 2 --phase "$run/phase" --ack "$run/ack" \
    --ready "$run/ready" --stop "$run/stop" >jvm.out 2>jvm.err &
PID=$!
jvm_t0=$(date +%s)
if [[ ${FXAGENT_CYCLE_CONTROL:-0} == 1 ]]; then # the same workload and phases, no agent
    nice -n 10 "$IT_JDK/bin/java" -Xms64m -Xmx64m -XX:+AlwaysPreTouch \
        -XX:NativeMemoryTracking=summary -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints \
        -cp "$FXAGENT_SERVER_JAR" fxagent.test.CycleWorkload --workers 2 --phase "$run/phase" \
        --ack "$run/ctl.ack" --ready "$run/ctl.ready" --stop "$run/stop" >ctl.out 2>ctl.err &
    CTL=$!
fi
for ((i = 0; i < 600; i++)); do
    [[ -f ready ]] && break
    kill -0 "$PID" 2>/dev/null || { cat jvm.err >&2; it_fail "the workload exited early"; }
    sleep 0.1
done
[[ -f ready ]] || it_fail "the workload was not ready within 60 s"

fx() { timeout 120 "$FXPROF" "$@" --agent "$FXAGENT_LIB"; }
# cmd NAME ARGS...: runs fxprof, its answer in REPLY; fails the test unless it exits 0.
cmd() {
    local what=$1
    shift
    REPLY=$(fx "$what" "$PID" "$@" 2>&1) || it_fail "fxprof $what $*: $REPLY"
}
set_phase() {
    echo "$1" >phase.tmp && mv phase.tmp phase
    local i
    for ((i = 0; i < 3000; i++)); do
        [[ $(cat ack 2>/dev/null) == "$1" ]] && return 0
        sleep 0.01
    done
    it_fail "the workload did not switch to phase $1"
}
# A dump while stopped: refused with one line that names the stop's file, by fxprof (its exit
# code 1: the agent refused) and by jcmd (the agent's own return code, 2: the state).
dump_refused() {
    local out rc=0 want="nothing to dump: the recording was written at stop to "
    out=$(fx dump "$PID" -o "$run/refused-$1.json.gz" 2>&1) || rc=$?
    ((rc == 1)) || it_fail "cycle $1: fxprof dump while stopped exited $rc (not 1): $out"
    [[ $(wc -l <<<"$out") -eq 1 && $out == *"$want"*"r-$1.json.gz; start again"* ]] ||
        it_fail "cycle $1: fxprof dump while stopped said: $out"
    : >"$run/refused.reply"
    out=$(timeout 120 "$IT_JDK/bin/jcmd" "$PID" JVMTI.agent_load "\"$FXAGENT_LIB\"" \
        "\"dump,file=$run/refused-$1.json.gz,reply=$run/refused.reply\"" 2>&1) || true
    [[ $out == *"return code: 2"* ]] || it_fail "cycle $1: jcmd dump while stopped: $out"
    [[ $(wc -l <"$run/refused.reply") -eq 1 ]] && grep -q "^error: $want" "$run/refused.reply" ||
        it_fail "cycle $1: jcmd dump while stopped replied: $(cat "$run/refused.reply")"
    [[ ! -e $run/refused-$1.json.gz ]] || it_fail "cycle $1: a refused dump wrote a file"
}
signals_since_stop() { sed -n 's/.*; \([0-9]*\) signals since the stop.*/\1/p' <<<"$REPLY"; }
late_max=0 code_ranges="?"
count_tasks() { ls "/proc/$PID/task" | wc -l; }
count_fds() { ls "/proc/$PID/fd" | wc -l; }
count_timers() { grep -c '^ID:' "/proc/$PID/timers" 2>/dev/null || true; }
# What the agent holds (status: "agent heap N KiB in B blocks and P KiB of pages (unwind tables
# U KiB)"), in KiB, less the unwind tables: the JVM's, built once per library the first time a
# walk needs one, which may be after the warm-up stop (libc's is ~345 KiB). From mem_point NAME.
agent_kib() { echo $((MEM[${1}_heap] + MEM[${1}_pages] - MEM[${1}_unwind])); }
# The model's threads (status: "N threads (T tracks held by the model)"), from the REPLY of
# the last `cmd status` of this shell. A thread's track is freed once the thread ended and the window no longer
# holds it: before, the model kept one for every thread that ever lived (~35 per cycle here).
tracks_held() { sed -n 's/.* threads (\([0-9]*\) tracks held by the model).*/\1/p' <<<"$REPLY"; }
# The agent's threads: CPU ns, context switches (voluntary + not), and how many.
agent_threads() {
    local cpu=0 sw=0 n=0 t
    for t in /proc/"$PID"/task/*; do
        [[ $(cat "$t/comm" 2>/dev/null) == fxagent* ]] || continue
        n=$((n + 1))
        cpu=$((cpu + $(cut -d' ' -f1 "$t/schedstat")))
        sw=$((sw + $(awk '/ctxt_switches/ {s += $2} END {print s}' "$t/status")))
    done
    echo "$cpu $sw $n"
}

modes=(cpu wall itimer)
intervals=(1 2 5 10 20 50)
depths=(64 256 1024 2048 4096)
checks=()
check_batch() {
    ((${#checks[@]})) || return 0
    python3 "$IT_DIR/cycle_check.py" "${checks[@]}" || it_fail "recordings failed cycle_check (above)"
    local c
    for c in "${checks[@]}"; do rm -f "${c%:*}"; done
    checks=()
}

timers_before=$(count_timers)
# The JVM's own RSS grows for its first ~20 s of this workload (JIT, no agent needed: ~7 MiB),
# and each phase's loop is compiled when that phase first runs: both phases run, twice each,
# before the RSS before the first start is read, once that growth is over.
for w in 1000001 1000002 1000003 1000004; do
    set_phase "$w"
    sleep 2
done
while ((mem_wait && $(date +%s) - jvm_t0 < 20)); do sleep 1; done
mem_point pre
warm=$((cycles / 3 > 10 ? 10 : (cycles / 3 > 0 ? cycles / 3 : 1)))
t_begin=$(date +%s)
for ((c = 1; c <= cycles; c++)); do
    set_phase "$c"
    mode=${modes[c % 3]}
    iv=${intervals[c % 6]}
    depth=${depths[(c / 3) % 5]}
    ring=64k
    ((depth > 1024)) && ring=256k
    ((c % 7 == 0)) && ring=1m
    opts="depth=$depth,ring=$ring"
    [[ $mode == cpu ]] && opts+=",engine=$( ((c % 4 == 0)) && echo timer || echo auto)"
    ((c % 5 == 0)) && opts+=",markers=off"
    # The views on in every third recording and off in the others (issue 30: a start after a
    # stop takes them; its line names those on)
    views=", lock waits of 1ms+, allocations sampled every 524288 bytes;"
    if ((c % 3 == 1)); then opts+=",lock=1ms,alloc=512k"; else opts+=",lock=0,alloc=0" views=""; fi
    cmd start -m "$mode" -i "${iv}ms" -o "$run/r-$c.json.gz" --options "$opts"
    [[ $REPLY == *"interval ${iv}ms"* && $REPLY == *"$mode"* ]] || it_fail "cycle $c: start said: $REPLY"
    if [[ -n $views ]]; then
        [[ $REPLY == *"$views"* ]] || it_fail "cycle $c: lock= and alloc= on, the start said: $REPLY"
    elif [[ $REPLY == *"lock waits of"* || $REPLY == *"allocations sampled"* ]]; then
        it_fail "cycle $c: lock= and alloc= off, the start said: $REPLY"
    fi
    # Long enough for about 20 samples of each worker at this interval.
    sleep "$(awk -v iv="$iv" 'BEGIN {s = iv * 20 / 1000; print (s < 0.2 ? 0.2 : s)}')"
    if ((c % 10 == 0)); then # two clients at once, while running: status and dump, or 2 dumps
        if ((c % 20 == 0)); then
            fx dump "$PID" -o "$run/e-$c.json.gz" >st1.out 2>&1 &
        else
            fx status "$PID" >st1.out 2>&1 &
        fi
        p1=$!
        fx dump "$PID" -o "$run/d-$c.json.gz" >st2.out 2>&1 &
        p2=$!
        wait "$p1" || it_fail "cycle $c: concurrent client 1 failed: $(cat st1.out)"
        wait "$p2" || it_fail "cycle $c: concurrent dump failed: $(cat st2.out)"
        grep -q "running for\|sampling goes on" st1.out || it_fail "cycle $c: concurrent client 1: $(cat st1.out)"
        for f in "$run"/[de]-"$c".json.gz; do
            "$FXCHECK" "$f" >/dev/null || it_fail "cycle $c: the concurrent dump $f is not valid"
            rm -f "$f"
        done
    fi
    cmd stop
    [[ $REPLY == *"r-$c.json.gz"* ]] || it_fail "cycle $c: stop said: $REPLY"
    checks+=("$run/r-$c.json.gz:$c")
    # The JVM's compiled code, which sizes the code map a stopped agent keeps (~56 bytes a range;
    # more methods are compiled late on a loaded machine): the last recording's, for the held line.
    ((c == cycles)) && code_ranges=$(python3 -c 'import gzip, json, sys
ex = {e["label"]: e["value"] for g in json.load(gzip.open(sys.argv[1]))["meta"].get("extra") or []
      for e in g["entries"]}
print(ex.get("code ranges known", "?"))' "$run/r-$c.json.gz" 2>/dev/null || echo "?")
    ((c == 1 || c % 25 == 0)) && dump_refused "$c"
    ((${#checks[@]} >= 50)) && check_batch
    if ((c == warm)); then
        tasks0=$(count_tasks) fds0=$(count_fds)
        mem_point warm # its status, in this shell: tracks_held reads its REPLY
        tracks0=$(tracks_held) heap0=$(agent_kib warm)
    fi
    if ((c % 25 == 0)); then
        # A signal sent before the stop may still be pending on a thread that has not run
        # since; SIGPROF does not queue, so at most one per thread: no more than the threads.
        cmd status
        late=$(signals_since_stop)
        ((late <= $(count_tasks))) || it_fail "cycle $c: $late signals while stopped: $REPLY"
        late_max=$((late > late_max ? late : late_max))
        [[ $(count_timers) -eq $timers_before ]] || it_fail "cycle $c: POSIX timers left while stopped"
    fi
done
check_batch
t_cycles=$(($(date +%s) - t_begin))

# Stopped means idle: nothing of the agent runs and no signal arrives over stop_s seconds (the
# status before it lets late signals of the last recording arrive, and its own drain pass end).
sleep 0.5
cmd status
sig0=$(signals_since_stop)
sleep 0.5
read -r cpu0 sw0 n0 < <(agent_threads)
sleep "$stop_s"
read -r cpu1 sw1 n1 < <(agent_threads)
cmd status
sig1=$(signals_since_stop)
echo "$IT_NAME: stopped for ${stop_s} s: $n1 agent threads, $((cpu1 - cpu0)) ns CPU, $((sw1 - sw0)) context switches, $((sig1 - sig0)) signals; at most $late_max signals of a recording arrived after its stop; $REPLY"
((sig1 == sig0)) || it_fail "$((sig1 - sig0)) signals while stopped: $REPLY"
((sw1 == sw0 && cpu1 == cpu0)) || it_fail "the agent's threads ran while stopped: $((cpu1 - cpu0)) ns, $((sw1 - sw0)) switches"
[[ $(count_timers) -eq $timers_before ]] || it_fail "POSIX timers left while stopped: $(cat /proc/$PID/timers)"

# A stop racing a loop= dump (a 1 s loop, stopped around its first file).
cmd start -i 5ms --options "loop=1s"
sleep 1
cmd stop
"$FXCHECK" "$(sed -n 's/.* to \(\/.*\) ([0-9]* bytes.*/\1/p' <<<"$REPLY")" >/dev/null ||
    it_fail "the stop racing the loop wrote no valid file: $REPLY"

sleep 0.5
tasks1=$(count_tasks) fds1=$(count_fds)
mem_point end
tracks1=$(tracks_held) heap1=$(agent_kib end)
echo "$IT_NAME: anonymous RSS: ${MEM[pre_anon]} KiB before the first start, ${MEM[warm_anon]} after stop $warm, ${MEM[end_anon]} at the end; the agent's heap and pages (less unwind tables): $heap0 KiB after stop $warm, $heap1 KiB at the end"
echo "$IT_NAME: $cycles cycles in $t_cycles s; RSS before the first start ${MEM[pre_rss]} KiB; after stop $warm: $tasks0 threads, $fds0 fds, RSS ${MEM[warm_rss]} KiB; at the end: $tasks1 threads, $fds1 fds, RSS ${MEM[end_rss]} KiB ($((MEM[end_rss] - MEM[warm_rss])) KiB since stop $warm, $((MEM[end_rss] - MEM[pre_rss])) KiB since before the first start)"
mem_split pre end
rest_first=$MEM_REST
mem_split warm end
# The churn thread keeps up to a few short-lived threads alive at any time.
((tasks1 <= tasks0 + 4)) || it_fail "threads grew: $tasks0 -> $tasks1"
((fds1 <= fds0 + 2)) || it_fail "file descriptors grew: $fds0 -> $fds1"
# A stopped agent holds no file of its own: the RSS counter's /proc/self/statm and the thread
# scans' /proc/self/task are open only while sampling (counters.c, threads).
held=$(for f in "/proc/$PID/fd"/*; do readlink "$f"; done 2>/dev/null | grep -E "^/proc/($PID|self)/(statm|task)" || true)
[[ -z $held ]] || it_fail "the stopped agent holds its /proc files open: $held"
# The model's threads: the live ones and those of the last recording, not one per thread that
# ever lived (issue 23: 30 cycles left ~1,000 before, 1,000 cycles ~35,000).
echo "$IT_NAME: tracks held by the model: $tracks0 after stop $warm, $tracks1 at the end"
[[ -n $tracks0 && -n $tracks1 ]] || it_fail "status did not say the model's tracks: $REPLY"
((tracks1 <= tracks0 + 40)) || it_fail "the model's tracks grew: $tracks0 -> $tracks1"
[[ -n $heap0 && -n $heap1 ]] || it_fail "status gave no agent heap figure: $REPLY"
# What the agent holds, from its own count (fx_alloc.h): what a stop leaves and what cycles add.
# This is the leak check: the JVM's RSS moves by megabytes with its own work (below).
((heap1 - heap0 <= heap_growth_kib)) ||
    it_fail "the agent's heap grew by $((heap1 - heap0)) KiB since stop $warm (bound $heap_growth_kib)"
((heap1 <= heap_stopped_kib)) ||
    it_fail "a stopped agent holds $heap1 KiB of heap and pages (bound $heap_stopped_kib)"
# Issue 23: a stop frees the event queues and, once written, the model: what stays is the
# JVM's (the code map, JIT names, the registry's live threads) and the unwind tables.
echo "$IT_NAME: the stopped agent keeps $heap1 KiB less its unwind tables (${MEM[end_unwind]} KiB; bound $held_kib); the code map has $code_ranges ranges"
((heap1 <= held_kib)) ||
    it_fail "a stopped agent keeps $heap1 KiB of heap and pages less unwind tables (bound $held_kib)"
# The RSS split (cycle_mem.sh), each reading after the JVM's trim. A leak of the agent that
# bypasses its count shows in malloc that neither counts (bytes, touched or not) or in the
# anonymous RSS that neither holds (pages); the JVM's own growth (JDK 17: +8.3 MiB of RSS over
# 990 cycles while the agent's count rose 69 KiB) is NMT's, out of both.
if [[ -n $MEM_NEITHER ]]; then
    ((MEM_NEITHER <= malloc_bound_kib)) ||
        it_fail "malloc in use that neither the JVM (NMT) nor the agent counts grew by $MEM_NEITHER KiB since stop $warm (bound $malloc_bound_kib)"
else
    echo "$IT_NAME: status cannot say the process's malloc (not glibc's): that check is off"
fi
((MEM_REST <= rss_bound_kib)) ||
    it_fail "anonymous RSS that neither the JVM (NMT) nor the agent holds grew by $MEM_REST KiB since stop $warm (bound $rss_bound_kib)"
# Since before the first start, the first start's own cost less the agent's count: its
# threads' stacks and arenas, its data, glibc's arenas for them.
((rest_first <= rss_first_kib)) ||
    it_fail "anonymous RSS that neither the JVM (NMT) nor the agent holds grew by $rest_first KiB since before the first start (bound $rss_first_kib)"
echo "$IT_NAME: the agent's share since before the first start: its count $((MEM[end_heap] + MEM[end_pages])) KiB (unwind tables ${MEM[end_unwind]}) + the rest $rest_first KiB"

touch stop
rc=0
wait "$PID" || rc=$?
PID=
if [[ -n $CTL ]]; then
    wait "$CTL" || it_fail "the control JVM exited $?: $(cat ctl.err)"
    CTL=
fi
[[ $rc -eq 0 ]] || { cat jvm.err >&2; it_fail "the JVM exited $rc"; }
grep -q '^done' jvm.out || it_fail "the workload printed no done line"
it_no_hs_err
echo "$IT_NAME: OK: $cycles cycles"
