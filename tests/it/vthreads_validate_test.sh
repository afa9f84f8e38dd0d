#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Validate mode on carriers carrying a virtual thread (issue 22, item 6), on one JDK >= 21
# (skipped, exit 77, with one line on older JDKs). VThreadWorkload under validate=REPORT.json:
#   groups  6 CPU-bound virtual threads yielding on 2 carriers: the report's virtual_threads
#           section has >= 50 comparisons on carriers carrying one; outside mount transitions
#           (their own class) >= 99 % have every ASGCT frame right (exact, or exact but for the
#           frames still frozen in the heap, docs/VALIDATION.md 4.1); the mount events' slot
#           named the virtual thread the check found in >= 99 % of the checks, and was checked
#           on every comparison but the mount transitions, whose skips the report counts;
#   pinned  virtual threads pinned in a class initializer (never remounted): >= 20 such
#           comparisons, same bounds.
# Every mismatch of no documented pattern fails (validate_check.py). Fails on a build without
# the virtual_threads section (no such report key).
# usage: vthreads_validate_test.sh JDK_HOME   (env: FXAGENT_VTHREADS_JAR and it_lib's)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
# shellcheck source=tests/it/vthreads_lib.sh
source "$(dirname "$0")/vthreads_lib.sh"
vt_init it.vthreads_validate "$1"

# run NAME CARRIERS MIN_COMPARED WORKLOAD_ARGS...
run() {
    local name=$1 carriers=$2 least=$3
    shift 3
    vt_java "$name" "$carriers" \
        "validate=$FXAGENT_RUN_DIR/$name.validate.json,file=$FXAGENT_RUN_DIR/$name.json.gz" "$@"
    python3 "$IT_DIR/validate_check.py" "$FXAGENT_RUN_DIR/$name.validate.json" \
        --label "$IT_NAME: $name" --min-compared 50 --vthreads "$least" \
        --profile "$FXAGENT_RUN_DIR/$name.json.gz" ||
        it_fail "$name: validate on carriers carrying a virtual thread does not pass (see above)"
}

run groups 2 50 groups 8
run pinned 3 20 pinned 5
echo "$IT_NAME: OK"
