#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest it.validate_recovered.jdk<major>: validate mode checks the stack recoveries too
# (docs/VALIDATION.md 5.1). java-test/validate/fxagent/test/BigAlloc.java keeps 2 threads in the
# JVM's large-array allocation path, where a stopped thread's AsyncGetCallTrace mostly fails;
# the anchor walk of the not-in-Java recovery (agent/sampling/recover_anchor.c) is done beside
# ASGCT on each stopped thread and compared with GetStackTrace. Fails unless the report has the
# "recovered" and "anchor_walk_beside_asgct" classes, at least 20 anchor walks were compared and
# none disagreed (each disagreement printed), and the usual checks of validate_check.py pass.
# Fails on a build that compares no recovered stack (no such class in the report).
# Environment: FXAGENT_VALIDATE_JAR (fxagent-validate.jar) besides it_lib.sh's.
# usage: validate_recovered_test.sh JDK_HOME [SECONDS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
seconds=${2:-6}
name="it.validate_recovered.jdk$(fx_jdk_major "$1")"
it_init "$name" "$1"
[[ -f "${FXAGENT_VALIDATE_JAR:-}" ]] || it_fail "FXAGENT_VALIDATE_JAR not built: ${FXAGENT_VALIDATE_JAR:-unset}"

report=$FXAGENT_RUN_DIR/validate.json
profile=$FXAGENT_RUN_DIR/profile.json.gz
it_run bigalloc "$IT_JDK/bin/java" -Xmx256m "-agentpath:$FXAGENT_LIB=validate=$report,file=$profile" \
    -cp "$FXAGENT_VALIDATE_JAR" fxagent.test.BigAlloc "$seconds" 2
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
grep -q "^BigAlloc: 2 threads" bigalloc.out || it_fail "BigAlloc did not finish its work"
"$FXCHECK" "$profile" || it_fail "fxcheck rejected the profile recorded alongside validation"
python3 "$IT_DIR/validate_check.py" "$report" --label "$name" --min-compared 20 \
    --min-anchor-walks 20 --profile "$profile" || it_fail "the validate report does not pass (see above)"
echo "$name: OK"
