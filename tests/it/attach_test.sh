#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Attach to a JVM started WITHOUT the agent, with jcmd of the same JDK:
#   before start: status says "not started", dump is refused (2), a bad command is refused (1);
#   start,interval=10ms,file=...-%n  (the late-attach warning reaches the JVM's stderr);
#   three dumps while it runs: each a new file that fxcheck accepts, with the hot method on the
#     request threads, loaded by profiler-cli; a dump does not reset (sample counts grow);
#   while running: start (2), an option dump cannot take (1) and an unknown word (1) are
#     refused and the JVM goes on; a dump to an unwritable folder lands in the fallback folder
#     ($TMPDIR of the JVM) and the reply says "could not write X (reason); wrote Y instead";
#   stop writes the final file; status says stopped; stop again is refused (2), and so is a
#     dump (2: the recording was freed once written, the reply names its file);
#   start again (a new recording) with the views the first start did not ask for (issue 30:
#     lock=10us, lockowner=off, vtwait=5ms, vtracks=7, cstack=no, markers=off; alloc= is
#     alloc_test.sh attach's, whose workload allocates): its file's meta.extra shows each
#     (extra_check.py); dump,reset, a stop whose
#     write fails (3: the recording is kept), a dump that writes it (then refused again, 2);
#   a third start, cstack=fp,kstack=no,markers=on: kernel frames off for kstack=no, markers
#     back;
#   the JVM keeps serving and exits 0 with no hs_err file.
# usage: attach_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.attach.jdk$(fx_jdk_major "$1")" "$1"
source "$IT_DIR/profiler_cli.sh"
source "$IT_DIR/attach_lib.sh"
run=$FXAGENT_RUN_DIR

srv_start srv
expect_ok status "not started"
expect_error 2 dump "nothing to dump"
expect_error 1 "strat,interval=10ms" "did you mean 'start'"
expect_ok "start,interval=10ms,file=$run/attach-%n.json.gz" "started"
grep -q '^fxagent: warning: attached to a running JVM' "$SRV_LOG.err" ||
    it_fail "no late-attach warning on the JVM's stderr"

counts=()
for i in 1 2 3; do
    wait_samples $((i * 60))
    expect_ok dump "sampling goes on"
    [[ $(reply_path) == "$run/attach-$i.json.gz" ]] || it_fail "dump $i went to '$(reply_path)'"
    counts+=("$(check_profile "$run/attach-$i.json.gz" pcli)")
done
echo "$IT_NAME: samples in the three dumps: ${counts[*]}"
((counts[0] < counts[1] && counts[1] < counts[2])) ||
    it_fail "a dump reset the recording: sample counts ${counts[*]}"

expect_ok status "running for"
[[ $AG_REPLY == *"samples taken"* && $AG_REPLY == *"threads"* && $AG_REPLY == *"MiB"* ]] ||
    it_fail "the status line lacks figures: $AG_REPLY"
expect_error 2 start "already running"
expect_error 1 "dump,interval=1ms" "does not apply to dump"
expect_error 1 "frobnicate" "unknown option"

touch "$run/notadir"
expect_ok "dump,file=$run/notadir/x.json.gz" "could not write $run/notadir/x.json.gz ("
fallback=$(reply_path)
[[ $fallback == "$run/fallback/x.json.gz" ]] || it_fail "the fallback went to '$fallback'"
[[ $AG_REPLY == *"; wrote $fallback instead"* ]] || it_fail "the reply does not say 'wrote $fallback instead'"
check_profile "$fallback" >/dev/null

expect_ok stop "stopped"
stopped=$(reply_path)
[[ $stopped == "$run/attach-5.json.gz" ]] || it_fail "stop wrote '$stopped'"
n=$(check_profile "$stopped")
((n >= counts[2])) || it_fail "the stop's file has $n samples, fewer than dump 3's ${counts[2]}"
expect_ok status "stopped"
expect_error 2 stop "not running"
# Written at stop, the recording was freed: a dump has nothing to write (issue 23).
expect_error 2 dump "nothing to dump: the recording was written at stop to $stopped; start again to record"

expect_ok "start,lock=10us,lockowner=off,vtwait=5ms,vtracks=7,cstack=no,markers=off" \
    "started again"
[[ $AG_REPLY == *", lock waits of 10us+;"* ]] || it_fail "the start's line does not name lock=: $AG_REPLY"
wait_samples 1
sleep 2
expect_ok "dump,reset" "reset"
check_profile "$(reply_path)" >/dev/null
views=("Lock waits|lock= (ns)|=10000" "Lock waits|lockowner|=off" "Lock waits|park|~wrapped"
    "Kernel stacks|kernel frames unavailable|~cstack=no" "!Markers and counters")
((IT_MAJOR >= 21)) && views+=("Virtual threads|vtwait= (ns)|=5000000"
    "Virtual threads|track cap (vtracks=)|=7")
python3 "$IT_DIR/extra_check.py" --label "$IT_NAME: restart" "$(reply_path)" "${views[@]}" ||
    it_fail "a start after a stop did not take its options (see above)"
# A stop whose write fails everywhere (the target's folder missing, the fallback folder a file)
# keeps the recording: a dump writes it then, and once written it is freed (issue 23).
mv "$run/fallback" "$run/fallback.dir" && : >"$run/fallback"
expect_error 3 "stop,file=$run/missing/y.json.gz" "stopped, but no profile was written"
rm -f "$run/fallback" && mv "$run/fallback.dir" "$run/fallback"
expect_ok "dump,file=$run/after-failed-stop.json.gz" "dumped the stopped recording"
# Right after the reset this file may hold only a few samples: valid is enough.
"$FXCHECK" "$(reply_path)" || it_fail "fxcheck rejected $(reply_path)"
expect_error 2 dump "nothing to dump: the recording was written after its stop to $run/after-failed-stop.json.gz"

expect_ok "start,cstack=fp,kstack=no,markers=on" "started again"
wait_samples 1
expect_ok stop "stopped"
python3 "$IT_DIR/extra_check.py" --label "$IT_NAME: restart 3" "$(reply_path)" \
    "Kernel stacks|kernel frames unavailable|~kstack=no" "Markers and counters|counter rounds|>0" ||
    it_fail "a third start did not take its options (see above)"

srv_alive "after stop"
sleep 1
srv_finish
grep -q '^fxagent: wrote' "$SRV_LOG.err" && it_fail "a stopped recording was written again at exit"
echo "$IT_NAME: OK"
