#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest it.validate_stress.jdk<major>: validate mode on AllocStress (8 threads allocating through
# varied stacks) for SECONDS (default 12). No crash (exit 0, no hs_err), no hang (CTest's
# timeout, and the JVM must finish within SECONDS + 120 s here), a valid report, no mismatch
# outside the HotSpot patterns documented in docs/VALIDATION.md (every mismatch is printed), and
# a profile that passes fxcheck.
# Environment: FXAGENT_VALIDATE_JAR (fxagent-validate.jar) besides it_lib.sh's.
# usage: validate_stress_test.sh JDK_HOME [SECONDS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
seconds=${2:-12}
name="it.validate_stress.jdk$(fx_jdk_major "$1")"
it_init "$name" "$1"
[[ -f "${FXAGENT_VALIDATE_JAR:-}" ]] || it_fail "FXAGENT_VALIDATE_JAR not built: ${FXAGENT_VALIDATE_JAR:-unset}"

report=$FXAGENT_RUN_DIR/validate.json
profile=$FXAGENT_RUN_DIR/profile.json.gz
cmd=(timeout --kill-after=10 $((seconds + 120)) "$IT_JDK/bin/java"
    "-agentpath:$FXAGENT_LIB=validate=$report,file=$profile"
    -cp "$FXAGENT_VALIDATE_JAR" fxagent.test.AllocStress "$seconds" 8)
it_run stress "${cmd[@]}"
[[ $IT_RC -ne 124 && $IT_RC -ne 137 ]] || it_fail "the JVM did not finish within $((seconds + 120)) s"
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
grep -q "^AllocStress: 8 threads" stress.out || it_fail "AllocStress did not finish its work"
"$FXCHECK" "$profile" || it_fail "fxcheck rejected the profile recorded alongside validation"
python3 "$IT_DIR/validate_check.py" "$report" --label "$name" --min-compared 50 \
    --profile "$profile" || it_fail "the validate report does not pass (see above)"
echo "$name: OK"
