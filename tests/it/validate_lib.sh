# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared steps of the validate tests on java-test/validate's workloads (validate_stress_test.sh,
# validate_recovered_test.sh). Source it after it_lib.sh. CTest passes FXAGENT_VALIDATE_JAR
# (fxagent-validate.jar) besides it_lib.sh's variables.
#   va_init TEST JDK_HOME         it_init as TEST.jdk<major>, the jar checked; VA_REPORT and
#                                 VA_PROFILE name the report and the profile of the run
#   va_java LOG LIMIT FINISHED JAVA_ARGS...
#                                 the workload (JAVA_ARGS: JVM options, class, its arguments)
#                                 under validate=VA_REPORT,file=VA_PROFILE: it must end within
#                                 LIMIT s, exit 0 without hs_err and print a line starting FINISHED
#   va_check CHECK_ARGS...        fxcheck accepts VA_PROFILE and validate_check.py the report
#                                 (--label TEST.jdk<major> --profile VA_PROFILE CHECK_ARGS...)

va_init() {
    it_init "$1.jdk$(fx_jdk_major "$2")" "$2" FXAGENT_VALIDATE_JAR
    VA_REPORT=$FXAGENT_RUN_DIR/validate.json
    VA_PROFILE=$FXAGENT_RUN_DIR/profile.json.gz
}

va_java() {
    local log=$1 limit=$2 finished=$3
    shift 3
    it_run "$log" timeout --kill-after=10 "$limit" "$IT_JDK/bin/java" \
        "-agentpath:$FXAGENT_LIB=validate=$VA_REPORT,file=$VA_PROFILE" \
        -cp "$FXAGENT_VALIDATE_JAR" "$@"
    [[ $IT_RC -ne 124 && $IT_RC -ne 137 ]] || it_fail "the JVM did not finish within $limit s"
    [[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
    it_no_hs_err
    grep -q "^$finished" "$log.out" || it_fail "the workload did not finish its work (no '$finished' line)"
}

va_check() {
    "$FXCHECK" "$VA_PROFILE" || it_fail "fxcheck rejected the profile recorded alongside validation"
    python3 "$IT_DIR/validate_check.py" "$VA_REPORT" --label "$IT_NAME" --profile "$VA_PROFILE" \
        "$@" || it_fail "the validate report does not pass (see above)"
}
