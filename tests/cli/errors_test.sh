#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every fxprof error is one stderr line starting "fxprof: ", with nothing on stdout and a
# non-zero exit: bad and missing pids, a process that is not a JVM (left unsignalled and alive),
# a JVM that does not handle SIGQUIT (-Xrs without attach listener: a SIGQUIT would kill it; it
# stays alive), a JVM's thread id, bad -i and -m values (worded as the agent words them),
# unknown commands and options, missing or wrong files (more in misuse_targets_test.sh).
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_errors
cleanup() {
    cli_stop_sleeper
    if [[ -n "${sleep_pid:-}" ]]; then
        kill "$sleep_pid" 2>/dev/null || true
    fi
}
trap cleanup EXIT

pid_max=$(cat /proc/sys/kernel/pid_max)
cli_expect_error badpid "'abc' is not a process id" "$FXPROF" status abc
cli_expect_error zeropid "'0' is not a process id" "$FXPROF" dump 0
cli_expect_error nopid "no process with pid $pid_max\$" "$FXPROF" stop "$pid_max"
cli_expect_error rawnopid "no process with pid $pid_max\$" "$FXPROF" attach-raw "$pid_max" properties
cli_expect_error twopids "expected exactly one PID" "$FXPROF" status 1 2

sleep 300 &
sleep_pid=$!
# Until the child has exec'd, /proc names it after this shell.
for _ in $(seq 100); do
    [[ $(cat "/proc/$sleep_pid/comm" 2>/dev/null) == sleep ]] && break
    sleep 0.05
done
cli_expect_error notjava "process $sleep_pid \(sleep\) is not a HotSpot JVM" "$FXPROF" dump "$sleep_pid"
cli_expect_error rawnotjava "is not a HotSpot JVM" "$FXPROF" attach-raw "$sleep_pid" properties
kill -0 "$sleep_pid" || cli_fail "fxprof killed the non-JVM process"

duration="option 'interval': '5x' has an unknown unit \(ns, us, ms, s, m, h\); accepted: a whole duration from 100us to 10s"
cli_expect_error recbadi "^fxprof: $duration" "$FXPROF" record -i 5x -- java -version
cli_expect_error recsmalli "^fxprof: option 'interval': '10us' is out of range" \
    "$FXPROF" record -i 10us -- java -version
cli_expect_error recbadm "^fxprof: option 'mode': 'fast' .*accepted: cpu, itimer or wall" \
    "$FXPROF" record -m fast -- java -version
cli_expect_error startbadi "^fxprof: $duration" "$FXPROF" start "$sleep_pid" -i 5x
cli_expect_error recnojava "no java command given" "$FXPROF" record -o x.json
cli_expect_error recnotjava "'-jar' is not a java command" "$FXPROF" record -- -jar app.jar
cli_expect_error recbadopt "unknown option '--bogus'" "$FXPROF" record --bogus -- java
cli_expect_error recnoagent "--agent '/nonexistent/libfxagent.so': no such readable file" \
    "$FXPROF" record --agent /nonexistent/libfxagent.so -- java -version
cli_expect_error unknowncmd "unknown command 'frobnicate'" "$FXPROF" frobnicate
cli_expect_error summarymissing "cannot open /nonexistent.json" "$FXPROF" summary /nonexistent.json
echo "not json" >notjson.txt
cli_expect_error summarynotjson "notjson.txt is not a profile: it starts with byte 0x6e" "$FXPROF" summary notjson.txt
cli_expect_error openmissing "open: cannot open /nonexistent.json" \
    "$FXPROF" open /nonexistent.json --no-browser
cli_expect_error opennotprofile "notjson.txt is neither gzip nor JSON" \
    "$FXPROF" open notjson.txt --no-browser
cli_expect_error openbadport "--port '70000' is not a port" "$FXPROF" open x.json --port 70000
cli_expect_error badtimeout "--timeout: '0' is not a duration" "$FXPROF" dump 1 --timeout 0
# A bare number is seconds (to the ms), like asprof -d and sleep; anything else needs a unit.
cli_expect_error recbadd "record: -d: '3x' is not a duration of at least 1ms \(seconds, e.g. 30 or 1.5, or with a unit" \
    "$FXPROF" record -d 3x 1
cli_expect_error finetimeout "--timeout: '1.2345' is not a duration" "$FXPROF" dump 1 --timeout 1.2345
cli_expect_error baretimeout "^fxprof: no process with pid $pid_max\$" \
    "$FXPROF" attach-raw --timeout 1.5 "$pid_max" properties

fx_jdks_discover >/dev/null
jdk=${FX_JDK_HOMES[0]:-}
[[ -n $jdk ]] || cli_fail "no JDK to test -Xrs with"
# -Xrs leaves SIGQUIT to its default action (a SIGQUIT would kill the JVM); with
# -XX:+DisableAttachMechanism there is no socket either. fxprof names the flag when it can see
# it (hsperfdata, command line, option variables); hidden in an @argfile without hsperfdata it
# cannot, and the SIGQUIT check still refuses rather than signal.
printf '%s\n' -XX:-UsePerfData -Xrs -XX:+DisableAttachMechanism >xrs.args
cli_start_sleeper "$jdk" xrs "@$FXAGENT_RUN_DIR/xrs.args"
cli_expect_error xrs "process $CLI_JVM_PID \(java\) does not handle SIGQUIT .*not signalled" \
    "$FXPROF" attach-raw "$CLI_JVM_PID" properties
kill -0 "$CLI_JVM_PID" || cli_fail "the -Xrs JVM died"
# /proc lists thread ids too; a SIGQUIT "to a thread" would reach the whole JVM.
tid=$(ls "/proc/$CLI_JVM_PID/task" | sort -n | sed -n 2p)
cli_expect_error threadid "^fxprof: $tid is a thread of process $CLI_JVM_PID; give the process id$" \
    "$FXPROF" dump "$tid"
echo "$CLI_NAME: OK"
