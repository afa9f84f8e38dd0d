#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof list and fxprof record -d with the real libfxagent.so, on every JDK:
#   list (text and --json) shows our JVM with its main (the source file), JDK major and no agent;
#   record -d 2s PID writes a profile summary can read, then list says the agent is loaded and
#   stopped; start -> "sampling", stop -> "stopped" (text and --json agentState, from the drain
#   thread's OS name); no progress line ('\r') when stderr is not a terminal, one on a terminal
#   (script(1));
#   record -d NAME: a unique name records; a name two JVMs match, or none, exits 2 and lists the
#   candidates, and neither JVM gets the agent; a non-JVM pid exits 1 ("not a HotSpot JVM");
#   Ctrl-C during record -d 60s stops early, writes the profile and exits 0;
#   record -d 3 PID (a bare number is seconds, as in asprof -d 3) the moment java was launched:
#   fxprof waits for the JVM to start (one line says so) and records 3 s; start at launch of a
#   JVM without hsperfdata (-XX:-UsePerfData) waits too, then stop writes.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_list_record
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    cli_stop_sleeper
}
trap cleanup EXIT
[[ -n "${FXAGENT_LIB:-}" && -f "$FXAGENT_LIB" ]] || cli_skip "libfxagent.so is not built"
A=(--agent "$FXAGENT_LIB")

# A main no other test's JVM has: the source launcher takes any file name.
uniq=FxList$$x$RANDOM
cp "$CLI_DIR/Sleeper.java" "$uniq.java"

start_jvm() { # JDK LOG: a sleeper from $uniq.java; sets JVM_PID
    "$1/bin/java" -Xshare:auto "$FXAGENT_RUN_DIR/$uniq.java" 300 >"$2.out" 2>"$2.err" &
    JVM_PID=$!
    PIDS+=("$JVM_PID")
    for _ in $(seq 1 600); do
        grep -q '^ready$' "$2.out" && return 0
        kill -0 "$JVM_PID" 2>/dev/null || cli_fail "the JVM exited early: $(cat "$2.err")"
        sleep 0.1
    done
    cli_fail "the JVM did not start within 60 s"
}

list_entry() { # PID LOG: the list --json entry of PID as "main jdk agentLoaded agentState"
    "$FXPROF" list --json >"$2.json" 2>"$2.err" || cli_fail "list --json exited $?"
    python3 - "$1" "$2.json" <<'PY' || cli_fail "list --json: $(head -c 2000 "$2.json")"
import json, sys
pid, path = int(sys.argv[1]), sys.argv[2]
# strict UTF-8, as the JSON standard and every reader ask: other JVMs' command lines are in it
for e in json.loads(open(path, "rb").read().decode("utf-8")):
    if e["pid"] == pid:
        print(e["main"].rsplit("/", 1)[-1], e["jdk"], str(e["agentLoaded"]).lower(),
              e.get("agentState") or "null")
        break
else:
    sys.exit(f"pid {pid} is not in the list")
PY
}

# list_state PID WANT LOG: waits (at most 30 s) until list, text and --json, shows the agent's
# state WANT: the drain thread renames itself at its next pass (every 10 ms) after a start.
list_state() {
    local i state=
    for i in $(seq 1 300); do
        read -r _ _ _ state < <(list_entry "$1" "$3.$i")
        if [[ $state == "$2" ]] &&
            grep -Eq "^$1 +[^ ]+ +[^ ]+ +$2 " <("$FXPROF" list); then
            return 0
        fi
        sleep 0.1
    done
    cli_fail "list --json says agentState=$state for pid $1 (or the table differs), expected $2: $("$FXPROF" list)"
}

fx_jdks_discover
((${#FX_JDK_HOMES[@]} > 0)) || cli_fail "no JDK to test with"
for k in "${!FX_JDK_HOMES[@]}"; do
    jdk=${FX_JDK_HOMES[$k]} major=${FX_JDK_MAJORS[$k]}
    start_jvm "$jdk" "jvm$major"
    pid=$JVM_PID

    cli_run "list$major" "$FXPROF" list
    [[ $CLI_RC -eq 0 ]] || cli_fail "list exited $CLI_RC"
    grep -Eq "^$pid +[^ ]+ +$major[.0-9+a-z-]* +- +.*/$uniq\.java$" "list$major.out" ||
        cli_fail "list does not show pid $pid with JDK $major, no agent and $uniq.java"
    read -r main ver loaded state < <(list_entry "$pid" "lj$major")
    [[ $main == "$uniq.java" && $ver == "$major"* && $loaded == false && $state == null ]] ||
        cli_fail "list --json: '$main $ver $loaded $state' for pid $pid"

    cli_run "rec$major" "$FXPROF" record "${A[@]}" -d 2s -o "rec$major.json.gz" "$pid"
    [[ $CLI_RC -eq 0 ]] || cli_fail "record -d 2s $pid exited $CLI_RC"
    "$FXPROF" summary "rec$major.json.gz" >/dev/null || cli_fail "the profile of record -d is not readable"
    ! grep -q $'\r' "rec$major.err" || cli_fail "a progress line was drawn on a non-terminal stderr"
    read -r main ver loaded state < <(list_entry "$pid" "lj2$major")
    [[ $loaded == true ]] || cli_fail "after record -d, list --json says agentLoaded=$loaded"
    list_state "$pid" stopped "st1$major" # record -d ends with a stop
    "$FXPROF" start "${A[@]}" "$pid" >/dev/null || cli_fail "start $pid failed"
    list_state "$pid" sampling "st2$major"
    "$FXPROF" stop "$pid" -o "stop$major.json.gz" >/dev/null || cli_fail "stop $pid failed"
    list_state "$pid" stopped "st3$major"

    if command -v script >/dev/null; then
        script -qec "'$FXPROF' record --agent '$FXAGENT_LIB' -d 3s -o tty$major.json.gz $pid" "tty$major.log" >/dev/null </dev/null ||
            cli_fail "record -d under script(1) failed: $(cat "tty$major.log")"
        grep -q $'\rfxprof: recording pid '"$pid"': [0-9]* s of 3 s' "tty$major.log" ||
            cli_fail "no progress line on a terminal: $(cat -v "tty$major.log")"
    fi

    # A script that launches java and attaches at once: the JVM is waited for, with one line,
    # and "-d 3" is 3 s (profilingStartTime to profilingEndTime; a unit-less 3 ms or 3 min would
    # be far off).
    "$jdk/bin/java" -Xshare:auto "$CLI_DIR/Sleeper.java" 300 >"now$major.jvm.out" 2>&1 &
    now=$!
    PIDS+=("$now")
    cli_run "now$major" "$FXPROF" record "${A[@]}" -d 3 -o "now$major.json.gz" "$now"
    [[ $CLI_RC -eq 0 ]] || cli_fail "record -d 3 right after java was launched exited $CLI_RC"
    # The name is the process's at fxprof's first look: `bash` while the shell's fork has not
    # exec'd java yet (a race of this test's `&`), else `java`.
    [[ $(grep -cE "^fxprof: process $now \((java|bash)\) is still starting: waiting up to 10 s for it$" "now$major.err") -eq 1 ]] ||
        cli_fail "record -d 3 at launch: the wait for the starting JVM is not said once"
    span=$(python3 -c 'import gzip, json, sys
m = json.load(gzip.open(sys.argv[1]))["meta"]
print(round(m["profilingEndTime"] - m["profilingStartTime"]))' "now$major.json.gz")
    echo "$CLI_NAME: record -d 3 at launch on JDK $major: $span ms recorded"
    ((span >= 2900 && span <= 30000)) || cli_fail "record -d 3 recorded $span ms, expected 3 s"
    kill "$now"
    wait "$now" 2>/dev/null || true
    # The same without hsperfdata (-XX:-UsePerfData): fxprof start at launch, then stop.
    "$jdk/bin/java" -Xshare:auto -XX:-UsePerfData "$CLI_DIR/Sleeper.java" 300 >"noperf$major.jvm.out" 2>&1 &
    now=$!
    PIDS+=("$now")
    cli_run "noperf$major" "$FXPROF" start "${A[@]}" "$now"
    [[ $CLI_RC -eq 0 ]] || cli_fail "start right after java -XX:-UsePerfData was launched exited $CLI_RC"
    grep -q "^fxprof: process $now (java) is still starting: waiting up to 10 s for it$" "noperf$major.err" ||
        cli_fail "start at launch without hsperfdata: the wait is not said"
    "$FXPROF" stop "$now" -o "noperf$major.json.gz" >/dev/null || cli_fail "stop after a start at launch failed"
    kill "$now"
    wait "$now" 2>/dev/null || true

    # Ctrl-C during -d: stops early and writes.
    "$FXPROF" record "${A[@]}" -d 60s -o "int$major.json.gz" "$uniq" >int.out 2>int.err &
    rec=$!
    sleep 3
    kill -INT "$rec"
    rc=0
    wait "$rec" || rc=$?
    sed "s/^/    int: /" int.out int.err
    [[ $rc -eq 0 ]] || cli_fail "record -d interrupted: exit $rc, expected 0"
    grep -q 'interrupted after' int.err || cli_fail "the early stop is not said"
    "$FXPROF" summary "int$major.json.gz" >/dev/null || cli_fail "no readable profile after Ctrl-C"

    # Two JVMs match: exit 2, the candidates listed, neither touched.
    start_jvm "$jdk" "jvm2$major"
    pid2=$JVM_PID
    cli_expect_error "amb$major" "'$uniq' matches 2 JVMs: .*$pid.*$pid2|'$uniq' matches 2 JVMs: .*$pid2.*$pid" \
        "$FXPROF" record "${A[@]}" -d 1s "$uniq"
    [[ $CLI_RC -eq 2 ]] || cli_fail "an ambiguous NAME exited $CLI_RC, expected 2"
    read -r main ver loaded state < <(list_entry "$pid2" "lj3$major")
    [[ $loaded == false ]] || cli_fail "the second JVM got the agent although the NAME was ambiguous"
    kill "$pid" "$pid2"
    wait "$pid" "$pid2" 2>/dev/null || true
done

cli_expect_error noname "no JVM of yours runs a main class or jar named 'NoSuch$uniq'" \
    "$FXPROF" record "${A[@]}" -d 1s "NoSuch$uniq"
[[ $CLI_RC -eq 2 ]] || cli_fail "an unknown NAME exited $CLI_RC, expected 2"
sleep 300 &
PIDS+=("$!")
cli_expect_error notjvm "is not a HotSpot JVM" "$FXPROF" record "${A[@]}" -d 1s "$!"
[[ $CLI_RC -eq 1 ]] || cli_fail "a non-JVM pid exited $CLI_RC, expected 1"
cli_expect_error withjava "--java runs a new JVM; -d profiles a running one" \
    "$FXPROF" record -d 1s --java /bin/true 1
echo "$CLI_NAME: OK"
