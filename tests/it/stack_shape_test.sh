#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The megamorphic workload (java-test/stacks, fxagent.stacks.Mega) under the agent in cpu mode at
# 10 ms, default options otherwise (issue 20, docs/VALIDATION.md section 7):
#   the JVM exits 0 without hs_err; fxcheck accepts the profile; profiler-cli loads it and its
#   totals of Mega.loop and of each failure frame on thread "mega" equal ours; then
#   stack_shape_check.py runs the shape oracle (at most 5 % of the samples without a stack,
#   Mega.loop on at least 95 %, nothing but an implementation or a stub above it) and the
#   recovered-stack oracle (every recovered stack's path under its recovered frame is a call
#   site seen at ordinary samples; meta.extra's recovery counters agree with the samples) and the
#   root oracle (issue 32: at most 3 % of the ordinary stacks rooted at "[native: walk stopped
#   (Java frames not walked to the call stub)]", every native root the thread's start chain), and
#   the receiver oracle (issue 32 item 3: the class under each dispatch stub).
# Then async-profiler's VtableTests case re-expressed (issue 32 item 3): fxagent.stacks.Numbers
# (Number.doubleValue on Integer, Long, Double and Float) for 3 s at 2 ms; its collapsed output
# (--annotate) holds `Numbers.avg;vtable stub;java.lang.Integer_[i]` and `...java.lang.Long_[i]`,
# and no class under that stub but the four receivers.
# usage: stack_shape_test.sh JDK_HOME [SECONDS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
seconds=${2:-5}
name="it.stack_shape.jdk$(fx_jdk_major "$1")"
it_init "$name" "$1"
[[ -n "${FXAGENT_STACKS_JAR:-}" && -f "$FXAGENT_STACKS_JAR" ]] ||
    it_fail "stacks jar not built: ${FXAGENT_STACKS_JAR:-FXAGENT_STACKS_JAR not set}"
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"

profile=$FXAGENT_RUN_DIR/profile.json.gz
cmd=("$IT_JDK/bin/java" "-agentpath:$FXAGENT_LIB=mode=cpu,interval=10ms,file=$profile"
    -cp "$FXAGENT_STACKS_JAR" fxagent.stacks.Mega "$seconds")
it_run mega "${cmd[@]}"
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
[[ -s $profile ]] || it_fail "no profile at $profile"
"$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"

pcli_setup
pcli_load "$profile" || it_fail "profiler-cli could not load $profile"
pcli_thread_json mega pcli-%s.json functions ||
    it_fail "profiler-cli could not read thread 'mega' (see above)"

python3 "$IT_DIR/stack_shape_check.py" --profile "$profile" --thread mega \
    --pcli-functions pcli-functions.json --out shape.json --label "$name" ||
    it_fail "the megamorphic workload's stacks fail the oracle (see above)"

numbers=$FXAGENT_RUN_DIR/numbers.json.gz
it_run numbers "$IT_JDK/bin/java" "-agentpath:$FXAGENT_LIB=mode=cpu,interval=2ms,file=$numbers" \
    -cp "$FXAGENT_STACKS_JAR" fxagent.stacks.Numbers 3
[[ $IT_RC -eq 0 ]] || it_fail "java (Numbers) exited $IT_RC"
it_no_hs_err
"$FXCHECK" "$numbers" || it_fail "fxcheck rejected $numbers"
"$IT_FXPROF" convert "$numbers" --to collapsed --annotate -o numbers.collapsed ||
    it_fail "fxprof convert --annotate failed on $numbers"
site='fxagent\.stacks\.Numbers\.avg;vtable stub;'
for cls in Integer Long; do
    grep -q "${site}java\.lang\.${cls}_\[i\]" numbers.collapsed ||
        it_fail "no 'Numbers.avg;vtable stub;java.lang.${cls}_[i]' in numbers.collapsed"
done
foreign=$(grep -o "${site}[^; ]*" numbers.collapsed |
    grep -vE ';java\.lang\.(Integer|Long|Double|Float)_\[i\]$|_\[k\]$' || true)
[[ -z $foreign ]] || it_fail "classes under Numbers.avg's vtable stub that are not its receivers: $foreign"
echo "$name: Numbers: $(grep -c "${site}java" numbers.collapsed) stacks with a receiver under the vtable stub"
echo "$name: OK"
