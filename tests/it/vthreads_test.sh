#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Virtual threads (issue 22) on one JDK >= 21 (skipped, exit 77, with one line on older JDKs):
#   cpu    6 named virtual threads in two groups (alpha-N in alphaWork, beta-N in betaWork) on
#          2 carriers, 3 sleepers, one platform thread: >= 95 % of the samples of the virtual
#          threads' code are on their own virtual thread's track, <= 1 % on another's (a
#          group's method on the other group's track), each one's share of those samples
#          within 5 pp (or 4 binomial standard deviations) of its share of the work it counted
#   wall   the same workload: <= 2 % of the virtual threads' own samples carry a "[state: ...]"
#          label (their carriers are WAITING to JVMTI while they run);
#   pinned 2 virtual threads sleeping inside a class initializer: >= 50 % of their samples are
#          "[state: pinned]"; one reading a pipe (a child process's output) in native code:
#          >= 50 % "[state: pinned, in native, not on CPU]";
#   waits  4 virtual threads sleeping 20 ms and 2 blocked on a queue, vtwait=10ms: each
#          has a track whose "Virtual thread wait" markers number its own count of waits
#          (90 % to +2), last >= 10 ms, and carry the stack it waited in (waiterSleep or
#          takerTake under java.lang.VirtualThread's park);
#   review (issue 22's UI review, read from the files): no virtual-thread sample's root is a
#          continuation entry frame (Continuation.*, VirtualThread.run, Thread.runWith) in
#          cpu/wall/pinned; [state: pinned] is Idle/Pinned; wall has "[idle]" samples on the
#          virtual threads' tracks; cpu has no wait marker on the yielding alpha/beta threads
#          (yields counted in meta.extra); each waiter's marker has kind sleep, each taker's park;
#   sleepsum 24 virtual threads spinning 3 ms and sleeping 20 ms on 2 carriers, mode=wall without
#          vtwait= (1 ms there by default), vtracks=8 (issue 30 items 5 and 11): the sleep
#          markers add up to the workload's sleeps * 20 ms within 10 % (JDK 24+: before, no
#          wake time, counted), "Waiting for a carrier" markers exist and each starts where its
#          sleep ends; the carriers' samples past the cap are all under "[virtual thread]
#          sleepy-*" (no root per virtual thread) and "Virtual thread" markers name them;
#   field, fieldpin  cpu and pinned again with vtwait=0: on JDK 24+ mounts are tracked by the
#          carrier's JavaThread::_monitor_owner_id (no mount events; meta.extra "mounts tracked
#          by" says which way), with the same checks as cpu and pinned (cpu, wall,
#          pinned and waits set vtwait=10ms: they check the mount events' way);
#   notrans  cpu with vtwait=0 and HotSpot's JVMTI mount transitions off
#          (-XX:-DoJVMTIVirtualThreadTransitions, which removes nearly all of a JVMTI agent's
#          per-mount cost): meta.extra says "off", and on JDK 24+ mounts are still tracked by the
#          JavaThread field: >= 95 % of the burners' samples on virtual-thread tracks (unnamed:
#          no VirtualThreadStart event), none on the carriers'; the runs with the flag say "on";
#   valloc 4 virtual threads allocating arrays, alloc=16k (issue 32 item 6): no allocation
#          stack under java.lang.VirtualThread.run holds its carrier's root (the walk below the
#          Java frames is not taken on a virtual thread), each left-out walk counted
#          (vthreads_alloc_check.py);
#   churn  100k short-lived virtual threads with loop=1s dumps and memory=16m: exits 0, no
#          hs_err, fxcheck accepts every file, profiler-cli loads the last; past vtracks=32
#          their carrier samples are under "[virtual thread] churn-*" or "[virtual thread]"
#          (unnamed), no root of one virtual thread, and "Virtual thread" markers name them.
# Read through profiler-cli (vthreads_check.py). Fails on a build without mount tracking (no
# virtual thread track at all).
# usage: vthreads_test.sh JDK_HOME   (env: FXAGENT_VTHREADS_JAR and it_lib's)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
# shellcheck source=tests/it/vthreads_lib.sh
source "$(dirname "$0")/vthreads_lib.sh"
vt_init it.vthreads "$1"
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"
pcli_available || { echo "SKIP: profiler-cli is not installed"; exit 77; }

# run NAME CARRIERS AGENT_OPTIONS WORKLOAD_ARGS...
run() {
    local name=$1 carriers=$2 opts=$3
    shift 3
    vt_java "$name" "$carriers" "quiet,file=$FXAGENT_RUN_DIR/$name.json.gz,$opts" "$@"
}

run cpu 2 mode=cpu,interval=10ms,vtwait=10ms groups 6
run wall 2 mode=wall,interval=10ms,vtwait=10ms groups 4
run pinned 4 mode=wall,interval=10ms,vtwait=10ms pinned 3
run field 2 mode=cpu,interval=10ms,vtwait=0 groups 6
run fieldpin 4 mode=wall,interval=10ms,vtwait=0 pinned 3
run waits 2 mode=cpu,interval=10ms,vtwait=10ms waits 3
run sleepsum 2 mode=wall,interval=10ms,vtracks=8 sleepsum 3
run valloc 2 mode=cpu,interval=10ms,vtwait=0,alloc=16k allocs 2
python3 "$IT_DIR/vthreads_alloc_check.py" "$FXAGENT_RUN_DIR/valloc.json.gz" ||
    it_fail "valloc: allocation stacks of virtual threads joined to their carrier's (see above)"
VT_JVM_OPTS=(-XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions)
run notrans 2 mode=cpu,interval=10ms,vtwait=0 groups 4
VT_JVM_OPTS=()
run churn 2 mode=cpu,interval=1ms,loop=1s,memory=16m churn 100000
grep -q "^churned 100000$" churn.out || it_fail "churn: the workload did not finish its threads"
churn_last=$(find . -maxdepth 1 -name 'churn-*.json.gz' | sort -V | tail -n 1)
[[ -n $churn_last ]] || it_fail "churn: loop=1s wrote no profile"

pcli_setup
for name in cpu wall pinned field fieldpin; do
    pcli_load "$FXAGENT_RUN_DIR/$name.json.gz" || it_fail "profiler-cli could not load $name.json.gz"
    python3 "$IT_DIR/vthreads_check.py" dump "$name" || it_fail "profiler-cli could not read $name"
    profiler-cli stop --all >/dev/null 2>&1 || true
    unset PCLI_SESSION
done
pcli_load "$FXAGENT_RUN_DIR/waits.json.gz" || it_fail "profiler-cli could not load waits.json.gz"
python3 "$IT_DIR/vthreads_check.py" waits waits || it_fail "profiler-cli could not read the wait markers"
profiler-cli stop --all >/dev/null 2>&1 || true
unset PCLI_SESSION
pcli_load "$churn_last" || it_fail "profiler-cli could not load $churn_last"

VT_JDK_MAJOR=$(fx_jdk_major "$IT_JDK") python3 "$IT_DIR/vthreads_check.py" check --label "$IT_NAME" "$FXAGENT_RUN_DIR" ||
    it_fail "virtual threads not shown as they ran (see above)"
echo "$IT_NAME: OK"
