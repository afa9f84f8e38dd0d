#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One stress scenario under the agent at interval=1ms; every one asserts exit 0, the workload's
# "done" line, no hs_err, and a profile fxcheck accepts, plus what the scenario is about:
#   short       2,000 short-lived threads (20 alive at a time): >= 20 of them have samples
#   concurrent  200 threads busy together for 10 s: every thread that used >= 3 intervals of CPU
#               while its timer was armed (its own count, printed by the workload) has samples,
#               the sample weight covers >= half that CPU, and no loss counter is set but ring
#               drops up to 0.1 % of the signals (a starved drain's, counted); threads
#               the scheduler hardly ran (under the bar) are counted, not failed. The bar is 3
#               intervals with perf, 3 intervals + 20 ms where a timer samples (engine=auto
#               starts each thread on one): 10 s, not 5, so that under a loaded CI each of the
#               200 threads still gets ~25 ms of CPU and something is checked
#   deep        recursion to 10,000 frames, depth=2048 (default): the stack is cut and marked,
#               "[truncated]" and StressWorkload.recurse have samples
#   unload      300 class loaders each defining StressHot, run hot ~30 ms, dropped, System.gc():
#               the JVM logs StressHot unloaded; StressHot.run or "[unknown method]" has samples
#   alloc       4 threads allocating for 8 s in -Xmx64m: >= 10 GCs logged; alloc-* sampled
# usage: stress_scenario.sh SCENARIO JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
sc=$1
it_init "it.stress.$sc.jdk$(fx_jdk_major "$2")" "$2"
source "$IT_DIR/stress_lib.sh"
run=$FXAGENT_RUN_DIR
p=$run/$sc.json.gz
opts="interval=1ms,file=$p"
W=fxagent.stress.StressWorkload

case $sc in
short) st_run w "$opts" -- short 2000 ;;
concurrent) st_run w "$opts" -- concurrent 200 10 ;;
deep) st_run w "$opts" -- deep 10000 5 ;;
unload) st_run w "$opts" -Xlog:class+unload=info -- unload 300 ;;
alloc) st_run w "$opts" -Xmx64m -Xlog:gc -- alloc 8 ;;
*) it_fail "unknown scenario $sc" ;;
esac

[[ $ST_RC -eq 0 ]] || it_fail "the JVM exited $ST_RC"
grep -q "^done $sc" w.out || it_fail "no 'done $sc' line"
it_no_hs_err

case $sc in
short) st_check "$p" "$W.busyUntil" --threads short- 20 ;;
concurrent) st_check "$p" "$W.busyUntil" --cpu-covered conc- w.out --no-losses ;;
deep)
    st_check "$p" "[truncated]" "$W.recurse" --threads deep 1
    echo "$IT_NAME: survives: a 10,000-frame stack, cut at depth=2048 and marked [truncated]"
    ;;
unload)
    n=$(grep -c 'unloading class fxagent.stress.StressHot' w.out w.err | awk -F: '{s+=$2} END {print s+0}')
    echo "$IT_NAME: StressHot classes unloaded: $n of 300"
    [[ $n -ge 1 ]] || it_fail "no StressHot class was unloaded: the scenario did not happen"
    st_check "$p" "fxagent.stress.StressHot.run|[unknown method]"
    ;;
alloc)
    n=$(grep -c 'Pause' w.out || true)
    echo "$IT_NAME: GC pauses logged: $n"
    [[ $n -ge 10 ]] || it_fail "only $n GC pauses: no allocation storm"
    st_check "$p" --threads alloc- 1
    ;;
esac
echo "$IT_NAME: survives: no crash, exit 0, a valid profile"
echo "$IT_NAME: OK"
