#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof's exit codes are those its --help states: every command's --help says them (exit 0);
# a bad command line exits 2 with one line, for every command (an unknown option, a missing
# or extra operand, a typo of a command with a suggestion, a pid typed first, a negative pid,
# an agent option typed as an operand or as a long option, -o - where it cannot apply);
# `fxprof record -- ls` says ls is not a java launcher (exit 2) and does not run it, while java
# from PATH, an absolute bin/java and a symlink named otherwise are accepted (a stand-in java
# that records its arguments); a launcher that does not exist exits 1.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_exit_codes
[[ -n "${FXPROF_FAKE_AGENT:-}" && -f "$FXPROF_FAKE_AGENT" ]] || cli_fail "the fake agent is not built"
fake=$(realpath "$FXPROF_FAKE_AGENT")

# usage NAME PATTERN CMD...: one line matching PATTERN, exit 2.
usage() {
    local name=$1 pattern=$2
    shift 2
    cli_expect_error "$name" "$pattern" "$FXPROF" "$@"
    [[ $CLI_RC -eq 2 ]] || cli_fail "$name: exit $CLI_RC, expected 2"
}

cli_run help "$FXPROF" --help
[[ $CLI_RC -eq 0 ]] && grep -q '^exit codes: 0 done, 1 failed, 2 bad command line, 3 ' help.out ||
    cli_fail "fxprof --help does not state the exit codes"
for cmd in record start dump stop status open summary; do
    cli_run "help-$cmd" "$FXPROF" "$cmd" --help
    [[ $CLI_RC -eq 0 ]] || cli_fail "$cmd --help exited $CLI_RC"
    grep -q 'exit codes: ' "help-$cmd.out" || cli_fail "fxprof $cmd --help does not state its exit codes"
    usage "badopt-$cmd" "^fxprof: $cmd: unknown option '--bogus'" "$cmd" --bogus x
done
grep -q '3 fxagent is not loaded' help-status.out || cli_fail "status --help lacks exit code 3"
grep -q '4 the profile could not be written' help-dump.out || cli_fail "dump --help lacks exit code 4"
grep -q '4 java exited 0' help-record.out || cli_fail "record --help lacks exit code 4"

cli_run noargs "$FXPROF"
[[ $CLI_RC -eq 2 ]] || cli_fail "fxprof without arguments exited $CLI_RC, expected 2"
for cmd in start dump stop status; do
    usage "nopid-$cmd" "expected exactly one PID" "$cmd"
done
usage nofile "expected exactly one FILE" summary
usage nofile2 "expected exactly one FILE" open
usage typo "unknown command 'stauts' \(did you mean 'status'\?\)" stauts 1
usage prefix "unknown command 'sum' \(did you mean 'summary'\?\)" sum x.json
usage pidfirst "'4242' is not a command: the command comes first, e.g. fxprof status 4242" 4242 status
usage negative "'-5' is not a process id" dump -5
usage operand "'interval=1ms' looks like an agent option: give it as --options interval=1ms" start 1 interval=1ms
usage longagent "'depth' is an agent option; give it as --options depth=" start --depth=512 1
usage startstdout "-o - \(stdout\) applies to dump and stop" start 1 -o -
usage notapply "option -i/--interval does not apply to dump" dump 1 -i 1ms
usage summarytop "--top '0' is not a number" summary x.json --top 0

# The launcher check, with a stand-in java that records that it ran.
mkdir -p jdk/bin bin
cat >jdk/bin/java <<SH
#!/bin/sh
echo ran >"$PWD/ran.txt"
exit 0
SH
cp jdk/bin/java bin/notjava
chmod +x jdk/bin/java bin/notjava
usage ls "'ls' \(.*\) is not a java launcher" record --agent "$fake" -- ls -l
usage notjava "'bin/notjava' \(.*\) is not a java launcher" record --agent "$fake" -- bin/notjava -version
[[ ! -e ran.txt ]] || cli_fail "a launcher that is not java was run"
cli_expect_error missing "cannot run '/nonexistent/bin/java': no such executable" \
    "$FXPROF" record --agent "$fake" -- /nonexistent/bin/java -version
[[ $CLI_RC -eq 1 ]] || cli_fail "a missing launcher exited $CLI_RC, expected 1"
for how in path absolute symlink; do
    rm -f ran.txt
    case $how in
    path) cli_run "java-$how" env PATH="$PWD/jdk/bin:$PATH" "$FXPROF" record --agent "$fake" -- java -version ;;
    absolute) cli_run "java-$how" "$FXPROF" record --agent "$fake" -- "$PWD/jdk/bin/java" -version ;;
    symlink)
        ln -sf "$PWD/jdk/bin/java" bin/myjava
        cli_run "java-$how" "$FXPROF" record --agent "$fake" -- bin/myjava -version
        ;;
    esac
    [[ $CLI_RC -eq 0 && -e ran.txt ]] || cli_fail "java ($how) was not run: exit $CLI_RC"
done
echo "$CLI_NAME: OK"
