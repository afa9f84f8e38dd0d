#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Commands that race (issue 23), on CycleWorkload: each command gets one clear answer, nothing
# hangs (every client runs under `timeout`: a hang fails the test instead of blocking CI),
# nothing is lost, the JVM never crashes.
#   1. two fxprof clients at once, ROUNDS times: start+start (one starts, the other is told
#      "already running"), dump+status+dump while running (all answered, every file valid),
#      stop+stop (one writes the recording, the other is told "not running"), start+stop while
#      stopped (whichever wins, the agent ends in a state that status names, and a valid file);
#   2. a dump while another dump writes: three dumps of a 1 ms recording at once, each a valid
#      file with the samples of the one before it or more (dumps do not reset);
#   3. stop racing a periodic dump: loop=1s stopped 0.9, 1.0 and 1.1 s after its start: the stop
#      answers, every file written is valid;
#   4. start racing VM death: the workload calls System.exit(0) (--exit-now) while `fxprof
#      start` (or jcmd's, every third time) arrives, at offsets from 0 to 100 ms: the client
#      answers with one line (started, shutting down, or the JVM is gone; after fxprof's line
#      that it waits for a JVM still starting, which an exiting one looks like), a start that
#      succeeded leaves a valid profile written at VM death, the JVM exits 0 without hs_err.
# usage: race_test.sh JDK_HOME [ROUNDS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.race.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_SERVER_JAR
rounds=${FXAGENT_RACE_ROUNDS:-${2:-5}}
[[ -x ${FXPROF:-} ]] || it_fail "FXPROF is not set to the fxprof binary"
run=$FXAGENT_RUN_DIR
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# start_jvm NAME [ARGS...]: the workload in its own files NAME.*; PID set.
start_jvm() {
    local n=$1 i
    shift
    rm -f "$n".*
    "$IT_JDK/bin/java" -Xmx64m -cp "$FXAGENT_SERVER_JAR" fxagent.test.CycleWorkload \
        --workers 2 --phase "$run/$n.phase" --ack "$run/$n.ack" --ready "$run/$n.ready" \
        --stop "$run/$n.stop" "$@" >"$n.out" 2>"$n.err" &
    PID=$!
    PIDS+=("$PID")
    for ((i = 0; i < 600; i++)); do
        [[ -f $n.ready ]] && return 0
        kill -0 "$PID" 2>/dev/null || { cat "$n.err" >&2; it_fail "$n: the workload exited early"; }
        sleep 0.1
    done
    it_fail "$n: the workload was not ready within 60 s"
}

# client OUT CMD ARGS...: fxprof in the background under a timeout; its pid appended to CLIENTS.
CLIENTS=()
client() {
    local out=$1
    shift
    timeout 60 "$FXPROF" "$@" --agent "$FXAGENT_LIB" >"$out" 2>&1 &
    CLIENTS+=("$!")
}
# wait_clients: RCS[i] the exit code of CLIENTS[i]; 124 (a hang) fails the test.
wait_clients() {
    RCS=()
    local p rc
    for p in "${CLIENTS[@]}"; do
        rc=0
        wait "$p" || rc=$?
        ((rc != 124)) || it_fail "an fxprof client hung for 60 s"
        RCS+=("$rc")
    done
    CLIENTS=()
}
# one_line FILE WHAT: the client printed exactly one non-empty line.
one_line() {
    [[ $(grep -c . "$1") -eq 1 ]] || it_fail "$2: not one answer line: $(cat "$1")"
}
# one_wins OUT1 OUT2 WON LOST WHAT: after the two clients of the same command, one answered WON
# (exit 0), the other LOST (exit non-zero), each in one line.
one_wins() {
    wait_clients
    one_line "$1" "$5 (1)"
    one_line "$2" "$5 (2)"
    local won lost
    won=$(cat "$1" "$2" | grep -c "$3" || true)
    lost=$(cat "$1" "$2" | grep -c "$4" || true)
    ((won == 1 && lost == 1)) || it_fail "$5: $(cat "$1" "$2")"
    ((RCS[0] + RCS[1] > 0 && RCS[0] * RCS[1] == 0)) || it_fail "$5: exit codes ${RCS[*]}"
}
valid() { "$FXCHECK" "$1" >/dev/null || it_fail "$2: $1 is not a valid profile"; }
samples_of() { sed -n 's/.*wrote \([0-9]*\) \(CPU\|wall\) samples.*/\1/p' "$1"; }

# --- 1. two clients at once ---
start_jvm a
for ((r = 1; r <= rounds; r++)); do
    client s1.txt start "$PID" -i 2ms -o "$run/a-$r-1.json.gz"
    client s2.txt start "$PID" -i 5ms -m wall -o "$run/a-$r-2.json.gz"
    one_wins s1.txt s2.txt ': started' 'already running' "round $r: two starts"
    sleep 0.3
    client d1.txt dump "$PID" -o "$run/d-$r-1.json.gz"
    client st.txt status "$PID"
    client d2.txt dump "$PID" -o "$run/d-$r-2.json.gz"
    wait_clients
    for f in d1 st d2; do one_line "$f.txt" "round $r $f"; done
    [[ ${RCS[*]} == "0 0 0" ]] || it_fail "round $r: dump, status, dump: ${RCS[*]}: $(cat d1.txt st.txt d2.txt)"
    grep -q 'running for' st.txt || it_fail "round $r: status: $(cat st.txt)"
    valid "$run/d-$r-1.json.gz" "round $r dump 1"
    valid "$run/d-$r-2.json.gz" "round $r dump 2"
    client t1.txt stop "$PID"
    client t2.txt stop "$PID"
    one_wins t1.txt t2.txt ': stopped; wrote' 'not running' "round $r: two stops"
    for f in "$run"/a-"$r"-[12].json.gz; do valid "$f" "round $r stop"; done
    # Stopped: a start and a stop at once. Either order is right; the state says which won.
    client s1.txt start "$PID" -i 10ms -o "$run/b-$r.json.gz"
    client t1.txt stop "$PID"
    wait_clients
    one_line s1.txt "round $r start (with a stop)"
    one_line t1.txt "round $r stop (with a start)"
    grep -q ': started again' s1.txt || it_fail "round $r: start while stopped: $(cat s1.txt)"
    timeout 60 "$FXPROF" status "$PID" --agent "$FXAGENT_LIB" >st.txt 2>&1 || it_fail "status: $(cat st.txt)"
    if grep -q ': stopped; wrote' t1.txt; then # the stop came second
        grep -q ': stopped for' st.txt || it_fail "round $r: stopped after both, status: $(cat st.txt)"
        valid "$run/b-$r.json.gz" "round $r start+stop"
    else
        grep -q 'not running' t1.txt || it_fail "round $r: stop: $(cat t1.txt)"
        grep -q ': running for' st.txt || it_fail "round $r: running after both, status: $(cat st.txt)"
        timeout 60 "$FXPROF" stop "$PID" --agent "$FXAGENT_LIB" >t1.txt 2>&1 || it_fail "stop: $(cat t1.txt)"
        valid "$run/b-$r.json.gz" "round $r start, then stop"
    fi
    echo "$IT_NAME: round $r: two starts, dump+status+dump, two stops, start+stop: $(cut -d: -f2 t1.txt | head -c 40)"
done

# --- 2. a dump while another dump writes ---
timeout 60 "$FXPROF" start "$PID" -i 1ms -o "$run/c.json.gz" --agent "$FXAGENT_LIB" >/dev/null
sleep 2
for k in 1 2 3; do client "c$k.txt" dump "$PID" -o "$run/c-$k.json.gz"; done
wait_clients
[[ ${RCS[*]} == "0 0 0" ]] || it_fail "three dumps at once: ${RCS[*]}: $(cat c1.txt c2.txt c3.txt)"
for k in 1 2 3; do
    one_line "c$k.txt" "dump $k"
    valid "$run/c-$k.json.gz" "dump $k"
done
# The attach listener serves them one after another: sorted by size, each holds the one before.
mapfile -t counts < <(for k in 1 2 3; do samples_of "c$k.txt"; done | sort -n)
((counts[0] > 0)) || it_fail "the dumps wrote no sample: $(cat c1.txt)"
echo "$IT_NAME: three dumps at once: ${counts[*]} samples"
timeout 60 "$FXPROF" stop "$PID" --agent "$FXAGENT_LIB" >t1.txt 2>&1 || it_fail "stop: $(cat t1.txt)"
(($(samples_of t1.txt) >= counts[2])) || it_fail "the stop lost samples the dumps had: $(cat t1.txt)"

# --- 3. stop racing a periodic dump ---
for at in 0.9 1.0 1.1; do
    rm -f "$run"/l-*.json.gz
    timeout 60 "$FXPROF" start "$PID" -i 5ms -o "$run/l-%n.json.gz" --options loop=1s \
        --agent "$FXAGENT_LIB" >s1.txt 2>&1 || it_fail "start loop=1s: $(cat s1.txt)"
    sleep "$at"
    timeout 60 "$FXPROF" stop "$PID" --agent "$FXAGENT_LIB" >t1.txt 2>&1 ||
        it_fail "stop racing the loop at $at s: $(cat t1.txt)"
    one_line t1.txt "stop at $at s"
    n=0
    for f in "$run"/l-*.json.gz; do
        valid "$f" "loop stopped at $at s"
        n=$((n + 1))
    done
    ((n >= 1 && n <= 2)) || it_fail "loop stopped at $at s: $n files"
    echo "$IT_NAME: loop=1s stopped at $at s: $n valid files"
done
touch a.stop
rc=0
timeout 60 tail --pid="$PID" -f /dev/null || it_fail "the workload did not exit"
wait "$PID" || rc=$?
((rc == 0)) || { cat a.err >&2; it_fail "the workload exited $rc"; }

# --- 4. start racing VM death ---
declare -A outcome
for k in 0 1 2 3 4 5 6 7 8; do
    delay=$(awk -v k="$k" 'BEGIN { split("0 0.005 0.01 0.02 0.03 0.05 0.07 0.1 0.002", d, " "); print d[k + 1] }')
    start_jvm v --exit-now
    (sleep "$delay" && touch v.stop) &
    if ((k % 3 == 2)); then
        timeout 60 "$IT_JDK/bin/jcmd" "$PID" JVMTI.agent_load "$FXAGENT_LIB" \
            "\"start,interval=2ms,file=$run/v-$k.json.gz\"" >v.txt 2>&1 || true
        answer=$(grep -E 'return code|fxagent|Exception|not|refused|No such|Unable|AttachNotSupported' v.txt | head -1 || true)
    else
        rc=0
        timeout 60 "$FXPROF" start "$PID" -i 2ms -o "$run/v-$k.json.gz" --agent "$FXAGENT_LIB" \
            >v.txt 2>&1 || rc=$?
        ((rc != 124)) || it_fail "start racing VM death ($delay s): fxprof hung"
        # A JVM exiting looks like one still starting (its hsperfdata is no longer marked
        # accessible): fxprof may say it waits for it (one documented line), then answers.
        grep -v 'is still starting: waiting up to' v.txt >v1.txt || true
        one_line v1.txt "start racing VM death ($delay s)"
        answer=$(cat v1.txt)
    fi
    [[ -n $answer ]] || it_fail "start racing VM death ($delay s): no answer: $(cat v.txt)"
    wait $! 2>/dev/null || true
    jrc=0
    timeout 60 tail --pid="$PID" -f /dev/null || it_fail "the JVM did not exit within 60 s"
    wait "$PID" || jrc=$?
    ((jrc == 0)) || { cat v.err >&2; it_fail "start racing VM death ($delay s): the JVM exited $jrc"; }
    it_no_hs_err
    case $answer in
    *': started'* | *'return code: 0'*)
        valid "$run/v-$k.json.gz" "a start that won the race with VM death ($delay s)"
        outcome[started]=$((${outcome[started]:-0} + 1))
        ;;
    *'shutting down'*) outcome[refused]=$((${outcome[refused]:-0} + 1)) ;;
    *) outcome[gone]=$((${outcome[gone]:-0} + 1)) ;;
    esac
    echo "$IT_NAME: start racing System.exit after $delay s: $answer"
done
echo "$IT_NAME: start racing VM death: ${outcome[started]:-0} started (profile written at exit), ${outcome[refused]:-0} refused (shutting down), ${outcome[gone]:-0} the JVM gone"
echo "$IT_NAME: OK: $rounds rounds"
