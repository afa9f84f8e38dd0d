#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The interpreter's method entry rule (issue 32, docs/VALIDATION.md 8.5f): java-test/stacks'
# fxagent.stacks.Interp under -Xint, the agent in cpu mode at 2 ms for 3 s; thread "interp"
# calls small interpreted methods (static, with extra locals, synchronized, native) from
# Interp.loop. interp_entry_check.py requires recovered stacks (at least 3), each one's entered
# method and the call site under it (function and line, down to the root) seen in an ordinary
# sample with that method running above that call site, meta.extra's count of the rule at least
# the samples that show it, and failure pseudo-frames named over "Interpreter" on at most 2 % of
# the samples on the CPU. The JVM exits 0 without hs_err and fxcheck accepts the profile.
# usage: interp_entry_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.interp_entry.jdk$(fx_jdk_major "$1")" "$1"
[[ -n "${FXAGENT_STACKS_JAR:-}" && -f "$FXAGENT_STACKS_JAR" ]] ||
    it_fail "stacks jar not built: ${FXAGENT_STACKS_JAR:-FXAGENT_STACKS_JAR not set}"
profile=$FXAGENT_RUN_DIR/interp.json.gz
it_run interp "$IT_JDK/bin/java" -Xint "-agentpath:$FXAGENT_LIB=mode=cpu,interval=2ms,quiet,file=$profile" \
    -cp "$FXAGENT_STACKS_JAR" fxagent.stacks.Interp 3
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
[[ -s $profile ]] || it_fail "no profile at $profile"
"$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"
python3 "$IT_DIR/interp_entry_check.py" --label "$IT_NAME" --profile "$profile" ||
    it_fail "interpreter entry stacks wrong or not recovered (see above)"
echo "$IT_NAME: OK"
