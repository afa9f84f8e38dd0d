#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# status, dump and stop on a JVM that does not have fxagent: one line "fxagent is not loaded",
# exit 3, and nothing is loaded into the JVM (its maps have no fxagent afterwards, and JDK 21+
# print no dynamic-agent warning, which any load would cause). A stopped JVM (kill -STOP) is
# refused at once, not signalled. After a start (the fake agent, tests/cli/fake_agent.c),
# status reaches the agent.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_status_unloaded
trap cli_stop_sleeper EXIT
[[ -n "${FXPROF_FAKE_AGENT:-}" && -f "$FXPROF_FAKE_AGENT" ]] || cli_fail "the fake agent is not built"

fx_jdks_discover
((${#FX_JDK_HOMES[@]} > 0)) || cli_fail "no JDK to test with"
for k in "${!FX_JDK_HOMES[@]}"; do
    jdk=${FX_JDK_HOMES[$k]} major=${FX_JDK_MAJORS[$k]}
    cli_start_sleeper "$jdk" "jvm$major"
    pid=$CLI_JVM_PID
    for cmd in status dump stop; do
        cli_expect_error "$cmd$major" "^fxprof: pid $pid: fxagent is not loaded in process $pid \(java\); nothing was loaded into it" \
            "$FXPROF" "$cmd" "$pid" --agent "$FXPROF_FAKE_AGENT"
        [[ $CLI_RC -eq 3 ]] || cli_fail "$cmd: exit $CLI_RC, expected 3"
    done
    cli_expect_error "real$major" "fxagent is not loaded" "$FXPROF" status "$pid"
    ! grep -Eq 'fxagent|fake_agent' "/proc/$pid/maps" || cli_fail "an agent was loaded into the JVM"
    ! grep -q "agent has been loaded dynamically" "jvm$major.err" ||
        cli_fail "the JVM reports a dynamically loaded agent"
    [[ ! -e /proc/$pid/root/tmp/.java_pid$pid ]] || cli_fail "the JVM's attach listener was started"

    # A stopped JVM (Ctrl-Z) would keep a SIGQUIT pending and answer nothing: refused at once.
    kill -STOP "$pid"
    for _ in $(seq 1 100); do
        grep -q '^State:.*T' "/proc/$pid/status" && break
        sleep 0.05
    done
    cli_expect_error "stopped$major" "^fxprof: process $pid \(java\) is stopped .*kill -CONT $pid" \
        "$FXPROF" start "$pid" --agent "$FXPROF_FAKE_AGENT"
    kill -CONT "$pid"
    [[ $CLI_RC -eq 1 ]] || cli_fail "start on a stopped JVM exited $CLI_RC, expected 1"

    cli_run "start$major" "$FXPROF" start "$pid" --agent "$FXPROF_FAKE_AGENT"
    [[ $CLI_RC -eq 0 ]] || cli_fail "start exited $CLI_RC"
    cli_run "status2-$major" "$FXPROF" status "$pid" --agent "$FXPROF_FAKE_AGENT"
    [[ $CLI_RC -eq 0 ]] && grep -qx "pid $pid: fake agent did status" "status2-$major.out" ||
        cli_fail "status after start did not reach the agent"
    cli_stop_sleeper
done
echo "$CLI_NAME: OK"
