#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# status, dump and stop on a JVM that does not have fxagent: one line "fxagent is not loaded",
# exit 3, and nothing is loaded into the JVM (its maps have no fxagent afterwards, and JDK 21+
# print no dynamic-agent warning, which any load would cause). After a start (the fake agent,
# tests/cli/fake_agent.c), status reaches the agent.
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

    cli_run "start$major" "$FXPROF" start "$pid" --agent "$FXPROF_FAKE_AGENT"
    [[ $CLI_RC -eq 0 ]] || cli_fail "start exited $CLI_RC"
    cli_run "status2-$major" "$FXPROF" status "$pid" --agent "$FXPROF_FAKE_AGENT"
    [[ $CLI_RC -eq 0 ]] && grep -qx "pid $pid: fake agent did status" "status2-$major.out" ||
        cli_fail "status after start did not reach the agent"
    cli_stop_sleeper
done
echo "$CLI_NAME: OK"
