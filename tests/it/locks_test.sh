#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Lock waits (issue 18, lock=) on one JDK, with LockWorkload's known waits (3 x 300 ms on a
# MonitorLock, 3 x 300 ms on a ReentrantLock):
#   agentpath  mode=wall,lock=50ms from the start: the six waits as markers with class, owner,
#              kind and a stack holding the waiting method; "NAME: lock waits" tracks; nothing for the
#              thread that never contends; wall-mode states (sleeper Sleeping, blocked Blocked,
#              busy running);
#              "idle-pool" waits for work (LinkedBlockingQueue.take): "Idle wait" markers on an
#              "idle-pool: idle waits" track, no lock waits (issue 30); a waits track sits right
#              after its thread's, under its name as written; each wait ends with a sample
#              without a stack; the int[] monitor's class reads "int[]"; the program's stdout
#              is its own ("waits done"): no JDK warning for the re-bound Unsafe.park;
#   attach     the JVM starts without the agent; jcmd starts it without lock=, stops it, then
#              starts it again with lock=50ms,lockowner=off (issue 30: a restart takes lock=;
#              Unsafe.park was bound long before), a dump, then stop: the same waits in the
#              files, their monitor owners "unknown (lockowner=off)"; stdout still the
#              program's own; then a third start and stop: its meta.extra counts only its own
#              waits (issue 23), none of the first's;
#   storm      8 threads on one monitor (LockWorkload storm 8 3 0 yield), lock=1ms: short
#              contended enters counted, owner lookups within their budget; it begins after
#              500 ms without a contended enter, so its first wakes the idle lookup thread;
# each profile passes fxcheck, profiler-cli loads one, the checks are locks_check.py. Fails on a
# build without lock= (the option is refused) or without the markers, on one that looks the
# owner up at each contended enter (no lockowner=, no "waits below lock=" counts), or leaves the
# lock waits tracks open after their threads ended.
# usage: locks_test.sh JDK_HOME   (env: FXAGENT_LOCKS_JAR and it_lib's)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.locks.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_LOCKS_JAR
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"
RUN=$FXAGENT_RUN_DIR

it_run agentpath "$IT_JDK/bin/java" \
    "-agentpath:$FXAGENT_LIB=mode=wall,interval=10ms,lock=50ms,quiet,file=$RUN/agentpath.json.gz" \
    -jar "$FXAGENT_LOCKS_JAR" known 5
[[ $IT_RC -eq 0 ]] || it_fail "agentpath: java exited $IT_RC"
grep -q "waits done" agentpath.out || it_fail "agentpath: the workload did not finish its waits"
# Nothing of ours on the application's stdout (issue 30): the workload prints one line.
[[ $(cat agentpath.out) == "waits done" ]] || it_fail "agentpath: stdout is not the program's own"
grep -q "Re-registering" agentpath.err && it_fail "agentpath: the JDK warned on stderr"
"$FXCHECK" "$RUN/agentpath.json.gz" || it_fail "fxcheck rejected agentpath.json.gz"

# attach: the rounds begin 5 s in (jcmd, itself a JVM, can take 3 s to attach on a loaded
# machine); jcmd from the same JDK
# The workload stays until the file `release` exists (or 120 s): the dump and the stop must
# find it alive however slow jcmd is.
# The rounds begin once the file `go` exists, after a start without lock= and its stop.
rm -f "$RUN/release" "$RUN/go"
"$IT_JDK/bin/java" -XX:+IgnoreUnrecognizedVMOptions -XX:+EnableDynamicAgentLoading \
    -Dfxagent.locks.release="$RUN/release" -Dfxagent.locks.go="$RUN/go" \
    -jar "$FXAGENT_LOCKS_JAR" known 120 500 >attach.out 2>attach.err &
PID=$!
trap 'kill -9 $PID 2>/dev/null || true' EXIT
jcmd_agent() {
    local line
    timeout 120 "$IT_JDK/bin/jcmd" "$PID" JVMTI.agent_load "\"$FXAGENT_LIB\"" "\"$1\"" 2>&1 |
        while IFS= read -r line; do echo "$IT_NAME: jcmd ${1%%,*}: $line"; done
}
sleep 1.5
jcmd_agent "start,mode=cpu,quiet,file=$RUN/attach-first.json.gz"
jcmd_agent "stop"
jcmd_agent "start,lock=50ms,lockowner=off,file=$RUN/attach-start.json.gz"
touch "$RUN/go"
for _ in $(seq 1 200); do
    grep -q "waits done" attach.out && break
    sleep 0.1
done
grep -q "waits done" attach.out || it_fail "attach: the workload did not finish its waits"
jcmd_agent "dump,file=$RUN/attach-dump.json.gz"
jcmd_agent "stop,file=$RUN/attach-stop.json.gz"
# A second recording in the same JVM, after the waits: its meta.extra counts are its own
# (issue 23), not the first recording's waits.
jcmd_agent "start,mode=cpu,lock=50ms,lockowner=off,quiet,file=$RUN/attach-again.json.gz"
sleep 0.5
jcmd_agent "stop,file=$RUN/attach-again.json.gz"
touch "$RUN/release"
wait "$PID" || it_fail "attach: java exited $?"
trap - EXIT
sed "s/^/$IT_NAME: attach stderr: /" attach.err
[[ $(cat attach.out) == "waits done" ]] || it_fail "attach: stdout is not the program's own"
grep -q "Re-registering" attach.err && it_fail "attach: the JDK warned on stderr"
it_no_hs_err
for f in attach-dump attach-stop attach-again; do
    [[ -s $RUN/$f.json.gz ]] || it_fail "no $f.json.gz"
    "$FXCHECK" "$RUN/$f.json.gz" || it_fail "fxcheck rejected $f.json.gz"
done

it_run storm "$IT_JDK/bin/java" \
    "-agentpath:$FXAGENT_LIB=lock=1ms,quiet,file=$RUN/storm.json.gz" -Dfxagent.locks.quiet_ms=500 \
    -jar "$FXAGENT_LOCKS_JAR" storm 8 3 0 yield
[[ $IT_RC -eq 0 ]] || it_fail "storm: java exited $IT_RC"
"$FXCHECK" "$RUN/storm.json.gz" || it_fail "fxcheck rejected storm.json.gz"

pcli_setup
pcli_load "$RUN/agentpath.json.gz" || it_fail "profiler-cli could not load agentpath.json.gz"
pcli_json pcli-markers.json thread markers --search "Lock wait" ||
    it_fail "profiler-cli could not list the markers"

python3 "$IT_DIR/locks_check.py" --label "$IT_NAME" "$RUN" || it_fail "lock waits wrong (see above)"
echo "$IT_NAME: OK"
