#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Five demo runs in a row at interval=1ms (ten times the default rate): every JVM exits 0,
# every profile passes fxcheck, and no hs_err_pid*.log appears anywhere in the run dir.
# usage: repeat_test.sh JDK_HOME [RUNS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.repeat.jdk$(fx_jdk_major "$1")" "$1"
runs=${2:-5}

for i in $(seq 1 "$runs"); do
    it_java "run$i" "interval=1ms,file=$FXAGENT_RUN_DIR/run$i.json.gz" 1
    [[ $IT_RC -eq 0 ]] || it_fail "run $i of $runs: java exited $IT_RC"
    [[ -s run$i.json.gz ]] || it_fail "run $i of $runs: no profile run$i.json.gz"
    "$FXCHECK" "run$i.json.gz" || it_fail "run $i of $runs: fxcheck rejected run$i.json.gz"
    it_no_hs_err
done
echo "$IT_NAME: OK: $runs runs at interval=1ms, all exit 0, no hs_err"
