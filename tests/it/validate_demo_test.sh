#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest it.validate.jdk<major>: the demo under validate mode (validate=REPORT.json). The JVM
# exits 0 without hs_err; the report parses; at least 50 stacks were compared; every compared
# stack agreed exactly or below the top frame, or differed in a HotSpot pattern documented in
# docs/VALIDATION.md (validate_check.py prints every mismatch and the exact rate); the profile,
# sampled as usual meanwhile, passes fxcheck and its meta.extra "validate" group has the
# report's figures.
# usage: validate_demo_test.sh JDK_HOME [SECONDS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
seconds=${2:-5}
name="it.validate.jdk$(fx_jdk_major "$1")"
it_init "$name" "$1"

report=$FXAGENT_RUN_DIR/validate.json
profile=$FXAGENT_RUN_DIR/profile.json.gz
it_java demo "validate=$report,file=$profile" "$seconds"
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
grep -q "^fxagent: validate: " demo.err || it_fail "no 'fxagent: validate:' line on stderr"
"$FXCHECK" "$profile" || it_fail "fxcheck rejected the profile recorded alongside validation"
python3 "$IT_DIR/validate_check.py" "$report" --label "$name" --min-compared 50 \
    --profile "$profile" || it_fail "the validate report does not pass (see above)"
echo "$name: OK"
