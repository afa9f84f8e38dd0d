#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A JVM started with -XX:+DisableAttachMechanism never opens an attach socket: a SIGQUIT only
# makes it print a thread dump on its stdout. fxprof must say so before signalling, on every
# JDK, however the flag was given:
#   on the command line (read from the JVM's hsperfdata, sun.rt.jvmCapabilities);
#   with -XX:-UsePerfData (no hsperfdata), in JAVA_TOOL_OPTIONS or JDK_JAVA_OPTIONS (read from
#   /proc/PID/environ) or on the command line (/proc/PID/cmdline);
# each: one line naming the flag, exit 1, no thread dump on the JVM's stdout, the JVM alive.
# And the last flag wins: +DisableAttachMechanism in JAVA_TOOL_OPTIONS, then
# -DisableAttachMechanism on the command line, attaches.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_attach_disabled
trap cli_stop_sleeper EXIT

fx_jdks_discover
((${#FX_JDK_HOMES[@]} > 0)) || cli_fail "no JDK to test with"
for k in "${!FX_JDK_HOMES[@]}"; do
    jdk=${FX_JDK_HOMES[$k]} major=${FX_JDK_MAJORS[$k]}
    for how in perfdata tool-options-noperf jdk-options-noperf cmdline-noperf; do
        log=jvm$major-$how
        case $how in
        perfdata) cli_start_sleeper "$jdk" "$log" -XX:+DisableAttachMechanism ;;
        tool-options-noperf) JAVA_TOOL_OPTIONS="-XX:-UsePerfData -XX:+DisableAttachMechanism" \
            cli_start_sleeper "$jdk" "$log" ;;
        jdk-options-noperf)
            ((major >= 9)) || continue # JDK_JAVA_OPTIONS is read by JDK 9+ launchers
            JDK_JAVA_OPTIONS="-XX:+DisableAttachMechanism" cli_start_sleeper "$jdk" "$log" -XX:-UsePerfData
            ;;
        cmdline-noperf) cli_start_sleeper "$jdk" "$log" -XX:-UsePerfData -XX:+DisableAttachMechanism ;;
        esac
        pid=$CLI_JVM_PID
        for cmd in start status; do
            cli_expect_error "$cmd$major-$how" \
                "^fxprof: process $pid \(java\) was started with -XX:\+DisableAttachMechanism \(.*\): it cannot be attached to; not signalled$" \
                "$FXPROF" "$cmd" "$pid"
            [[ $CLI_RC -eq 1 ]] || cli_fail "$cmd on JDK $major ($how): exit $CLI_RC, expected 1"
        done
        cli_expect_error "raw$major-$how" "DisableAttachMechanism" "$FXPROF" attach-raw "$pid" properties
        kill -0 "$pid" || cli_fail "the JVM died ($how)"
        ! grep -q "Full thread dump" "$log.out" ||
            cli_fail "JDK $major ($how): the JVM got a SIGQUIT (a thread dump is on its stdout)"
        cli_stop_sleeper
    done
    grep -q "its hsperfdata says" "start$major-perfdata.err" || cli_fail "the hsperfdata was not read"
    grep -q "its command line or" "start$major-cmdline-noperf.err" || cli_fail "the fallback was not used"

    JAVA_TOOL_OPTIONS="-XX:+DisableAttachMechanism" \
        cli_start_sleeper "$jdk" "jvm$major-enabled" -XX:-UsePerfData -XX:-DisableAttachMechanism
    cli_run "enabled$major" "$FXPROF" attach-raw "$CLI_JVM_PID" properties
    [[ $CLI_RC -eq 0 ]] || cli_fail "JDK $major: -XX:-DisableAttachMechanism last did not attach"
    cli_stop_sleeper
done
echo "$CLI_NAME: OK"
