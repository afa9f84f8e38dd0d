#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof speaks HotSpot's attach protocol itself, on every JDK the integration tests use
# (tests/it/jdks.sh), against a plain sleeping JVM without our agent:
#   attach-raw PID properties: status 0 and java.version of that JDK's major;
#   attach-raw PID threaddump: status 0 and the main thread in Sleeper.main;
#   attach-raw PID load of a missing library: the JVM's "was not loaded" text comes back
#     (status -1 on JDK 17, 0 on JDK 21+), and fxprof start --agent <a library without
#     Agent_OnAttach> fails with one line quoting the JVM;
#   the .attach_pid trigger file is gone afterwards and the JVM is still running.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_attach_raw
trap cli_stop_sleeper EXIT

fx_jdks_discover
((${#FX_JDK_HOMES[@]} > 0)) || cli_fail "no JDK to test with"
libz=$(ldd "$FXPROF" | sed -n 's/.*=> \(\/[^ ]*libz\.so[^ ]*\).*/\1/p' | head -n 1)
[[ -f $libz ]] || cli_fail "cannot find libz.so through ldd $FXPROF"

for k in "${!FX_JDK_HOMES[@]}"; do
    jdk=${FX_JDK_HOMES[$k]} major=${FX_JDK_MAJORS[$k]}
    echo "$CLI_NAME: JDK $major at $jdk"
    cli_start_sleeper "$jdk" "jvm$major"
    pid=$CLI_JVM_PID

    cli_run "props$major" "$FXPROF" attach-raw "$pid" properties
    [[ $CLI_RC -eq 0 ]] || cli_fail "JDK $major: attach-raw properties exited $CLI_RC"
    [[ $(head -n 1 "props$major.out") == 0 ]] || cli_fail "JDK $major: status line is not 0"
    grep -Eq "^java\.version=$major([.+-]|$)" "props$major.out" ||
        cli_fail "JDK $major: no java.version=$major... in the properties"

    cli_run "threads$major" "$FXPROF" attach-raw "$pid" threaddump
    [[ $CLI_RC -eq 0 && $(head -n 1 "threads$major.out") == 0 ]] ||
        cli_fail "JDK $major: attach-raw threaddump failed"
    grep -q '^"main"' "threads$major.out" && grep -q 'at Sleeper.main' "threads$major.out" ||
        cli_fail "JDK $major: the thread dump does not show main in Sleeper.main"

    cli_run "load$major" "$FXPROF" attach-raw "$pid" load /nonexistent/libnope.so true ""
    grep -q '/nonexistent/libnope.so was not loaded' "load$major.out" ||
        cli_fail "JDK $major: no 'was not loaded' reply for a missing library"

    cli_expect_error "notagent$major" \
        "^fxprof: pid $pid: the JVM did not load .*libz\.so.*: Agent_OnAttach is not available in" \
        "$FXPROF" start "$pid" --agent "$libz"

    [[ ! -e /proc/$pid/cwd/.attach_pid$pid && ! -e /tmp/.attach_pid$pid ]] ||
        cli_fail "JDK $major: the .attach_pid trigger file was left behind"
    kill -0 "$pid" || cli_fail "JDK $major: the JVM died"
    cli_stop_sleeper
done
echo "$CLI_NAME: OK"
