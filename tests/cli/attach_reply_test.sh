#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof start/dump/stop/status against a stand-in agent (fake_agent.c) that answers through
# the reply file as docs/ATTACH.md specifies, on every JDK the integration tests use:
#   the agent gets "<action>[,interval=..][,mode=..][,file=<absolute>][,extra],reply=/tmp/fxprof-..."
#   an "ok: ..." reply is printed as "pid N: ..." with exit 0, also when it comes 1 s late;
#   an "error: ..." reply and a non-zero Agent_OnAttach without reply each give one line and
#   exit 1; no reply within --timeout gives one line and exit 1; a reply saying the profile
#   went elsewhere ("could not write X (reason); wrote Y instead") gives one line and exit 4;
#   every reply file fxprof created is gone afterwards.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_attach_reply
trap cli_stop_sleeper EXIT
[[ -n "${FXPROF_FAKE_AGENT:-}" && -f "$FXPROF_FAKE_AGENT" ]] || cli_fail "the fake agent is not built"
export FAKE_AGENT_LOG=$FXAGENT_RUN_DIR/agent-options.log

fx_jdks_discover
((${#FX_JDK_HOMES[@]} > 0)) || cli_fail "no JDK to test with"
A=(--agent "$FXPROF_FAKE_AGENT")
for k in "${!FX_JDK_HOMES[@]}"; do
    jdk=${FX_JDK_HOMES[$k]} major=${FX_JDK_MAJORS[$k]}
    echo "$CLI_NAME: JDK $major at $jdk"
    cli_start_sleeper "$jdk" "jvm$major"
    pid=$CLI_JVM_PID
    : >"$FAKE_AGENT_LOG"

    cli_run "start$major" "$FXPROF" start "$pid" -i 1ms -m wall --options depth=64 "${A[@]}"
    [[ $CLI_RC -eq 0 ]] || cli_fail "start exited $CLI_RC"
    grep -qx "pid $pid: fake agent did start" "start$major.out" || cli_fail "start: wrong output"
    grep -Eq '^start,interval=1ms,mode=wall,depth=64,reply=/tmp/fxprof-[0-9]+-[0-9a-f]{16}$' \
        "$FAKE_AGENT_LOG" || cli_fail "start: the agent got '$(cat "$FAKE_AGENT_LOG")'"

    cli_run "dump$major" "$FXPROF" dump "$pid" -o out-%p.json.gz "${A[@]}"
    [[ $CLI_RC -eq 0 ]] || cli_fail "dump exited $CLI_RC"
    grep -qx "pid $pid: fake agent did dump to $FXAGENT_RUN_DIR/out-%p.json.gz" "dump$major.out" ||
        cli_fail "dump: wrong output (a relative -o must reach the agent as an absolute path)"

    cli_run "late$major" "$FXPROF" status "$pid" -o late.json "${A[@]}" ||
        true # status takes no -o: a usage error
    [[ $CLI_RC -eq 2 ]] || cli_fail "status -o: exit $CLI_RC, expected 2"
    cli_run "late$major" "$FXPROF" dump "$pid" -o late.json "${A[@]}"
    [[ $CLI_RC -eq 0 ]] && grep -q "fake agent did dump to .*late.json" "late$major.out" ||
        cli_fail "a reply written 1 s after Agent_OnAttach returned was not waited for"

    cli_expect_error "fail$major" "^fxprof: pid $pid: fake agent: stop failed as asked$" \
        "$FXPROF" stop "$pid" -o fail.json "${A[@]}"
    cli_expect_error "refuse$major" "^fxprof: pid $pid: the agent refused 'stop' \(Agent_OnAttach returned 7\)" \
        "$FXPROF" stop "$pid" -o refuse.json "${A[@]}"
    cli_expect_error "timeout$major" "^fxprof: pid $pid: the agent took 'dump' \(return code 0\) but sent no outcome within 200 ms" \
        "$FXPROF" dump "$pid" -o late2.json --timeout 200ms "${A[@]}"

    # The profile went to a fallback file: the line says so and the exit code is 4.
    cli_expect_error "fallback$major" "^fxprof: pid $pid: .*could not write $FXAGENT_RUN_DIR/fallback.json \(Permission denied\); wrote /tmp/x.json.gz instead$" \
        "$FXPROF" dump "$pid" -o fallback.json "${A[@]}"
    [[ $CLI_RC -eq 4 ]] || cli_fail "a fallback dump exited $CLI_RC, expected 4"

    cli_run "status$major" "$FXPROF" status "$pid" "${A[@]}"
    [[ $CLI_RC -eq 0 ]] && grep -qx "pid $pid: fake agent did status" "status$major.out" ||
        cli_fail "status failed"

    replies=$(sed -n 's/.*reply=\(\/tmp\/fxprof-[0-9a-f-]*\).*/\1/p' "$FAKE_AGENT_LOG")
    [[ $(wc -l <<<"$replies") -eq 8 ]] || cli_fail "expected 8 loads, the agent saw: $replies"
    for r in $replies; do
        [[ ! -e $r ]] || cli_fail "reply file $r was left behind"
    done
    cli_stop_sleeper
done
echo "$CLI_NAME: OK"
