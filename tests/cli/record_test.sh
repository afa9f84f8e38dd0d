#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof record: the -agentpath goes right after the launcher, carrying the checked options,
# and fxprof exits with the launcher's exit code (a stand-in launcher proves both, without a
# JVM; --java takes any launcher, here a symlink to it not named java); then, when libfxagent.so and the demo classes are built, a real recording of the demo
# yields a gzip profile that fxprof summary reads back with its three threads.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_record
[[ -n "${FXPROF_FAKE_AGENT:-}" && -f "$FXPROF_FAKE_AGENT" ]] || cli_fail "the fake agent is not built"
fake=$(realpath "$FXPROF_FAKE_AGENT")

# Named java, as fxprof asks of a launcher given as the first operand.
mkdir -p fakejdk/bin
cat >fakejdk/bin/java <<SH
#!/bin/sh
printf '%s\n' "\$@" >"$PWD/args.txt"
exit 42
SH
chmod +x fakejdk/bin/java
ln -s fakejdk/bin/java fakejava.sh

cli_run args "$FXPROF" record --agent "$fake" -o x.json -i 20ms -m itimer -- ./fakejdk/bin/java -cp lib Main a
[[ $CLI_RC -eq 42 ]] || cli_fail "exit code $CLI_RC, expected the launcher's 42"
printf '%s\n' "-agentpath:$fake=interval=20ms,mode=itimer,file=x.json" -cp lib Main a >want.txt
diff want.txt args.txt || cli_fail "the launcher got the wrong arguments"
grep -q 'wrote no profile at x.json' args.err || cli_fail "no note about the missing profile"

cli_run javaopt "$FXPROF" record --agent "$fake" --java ./fakejava.sh -- -version
[[ $CLI_RC -eq 42 ]] || cli_fail "--java: exit code $CLI_RC, expected 42"
printf '%s\n' "-agentpath:$fake" -version >want.txt
diff want.txt args.txt || cli_fail "--java: the launcher got the wrong arguments"

[[ -n "${FXAGENT_LIB:-}" && -f "$FXAGENT_LIB" ]] || cli_skip "libfxagent.so is not built: the real recording was not run"
[[ -f "$FXAGENT_DEMO_CLASSES/fxagent/demo/Demo.class" ]] ||
    cli_skip "the demo classes are not built ($FXAGENT_DEMO_CLASSES): the real recording was not run"
fx_jdks_discover >/dev/null
jdk=${FX_JDK_HOMES[0]:-}
[[ -n $jdk ]] || cli_fail "no JDK to record with"
cli_run demo "$FXPROF" record --agent "$FXAGENT_LIB" -o demo.json.gz -i 10ms -- \
    "$jdk/bin/java" -cp "$FXAGENT_DEMO_CLASSES" fxagent.demo.Demo 2
[[ $CLI_RC -eq 0 ]] || cli_fail "recording the demo exited $CLI_RC"
[[ $(head -c 2 demo.json.gz | od -An -tx1 | tr -d ' ') == 1f8b ]] || cli_fail "demo.json.gz is not gzip"
grep -q 'fxprof: profile demo.json.gz' demo.err || cli_fail "no line naming the profile"
cli_run summary "$FXPROF" summary demo.json.gz
[[ $CLI_RC -eq 0 ]] || cli_fail "fxprof summary of the recording exited $CLI_RC"
for t in main worker-1 worker-2; do
    grep -q "^Thread \"$t\"" summary.out || cli_fail "no thread $t in the summary"
done
grep -q 'fxagent.demo.Demo.alpha' summary.out || cli_fail "Demo.alpha is not among the top methods"
echo "$CLI_NAME: OK"
