#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The demo under the agent in one mode, checked against its truth table:
#   the JVM exits 0 without hs_err; fxcheck accepts the profile; profiler-cli loads it;
#   threads "worker-1", "worker-2" and "main" exist with those names; then demo_shares.py:
#   cpu/itimer: worker-1 splits 50/30/20 between Demo.alpha/beta/gamma (+-7 pp), worker-2 is
#   >= 80 % in Demo.hashing, fxcheck and profiler-cli count the same samples;
#   wall: every thread has samples and main mostly waits.
# usage: demo_test.sh JDK_HOME cpu|itimer|wall [SECONDS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
mode=$2
seconds=${3:-3}
case $mode in cpu | itimer | wall) ;; *) it_fail "unknown mode '$mode'" ;; esac
name="it.demo.jdk$(fx_jdk_major "$1").$mode"
it_init "$name" "$1"
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"

profile=$FXAGENT_RUN_DIR/profile.json.gz
it_java demo "mode=$mode,interval=10ms,file=$profile" "$seconds"
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
[[ -s $profile ]] || it_fail "no profile at $profile"
echo "$name: profile $(stat -c %s "$profile") bytes"

"$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"
# The real fxcheck: the line above held the file to the totals (fxcheck_totals.sh) already.
"$IT_FXCHECK_REAL" --summary-json "$profile" >fxcheck-summary.json 2>fxcheck-summary.err ||
    it_fail "fxcheck --summary-json failed: $(cat fxcheck-summary.err)"

pcli_setup
pcli_load "$profile" || it_fail "profiler-cli could not load $profile"
pcli_json pcli-threads.json thread list || it_fail "profiler-cli thread list failed"
for t in worker-1 worker-2 main; do
    pcli_thread_json "$t" "pcli-%s-$t.json" functions samples top-down ||
        it_fail "profiler-cli could not read thread '$t' (see above)"
done

python3 "$IT_DIR/demo_shares.py" --run "$FXAGENT_RUN_DIR" --mode "$mode" --label "$name" ||
    it_fail "the profile does not match the demo's truth table (see above)"
echo "$name: OK"
