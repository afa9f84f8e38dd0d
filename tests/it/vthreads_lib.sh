# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared steps of the virtual-thread tests (vthreads_test.sh, vthreads_validate_test.sh,
# vthreads_attach_test.sh). Source it after it_lib.sh.
#   vt_init TEST JDK_HOME       before JDK 21: one SKIP line and exit 77; else it_init (as
#                               TEST.jdk<major>) with the workload's jar FXAGENT_VTHREADS_JAR,
#                               compiled in the build by the JDK under test (--release 21; the
#                               build's javac may be 17; tests/it/vthreads_tests.cmake)
#   vt_java NAME CARRIERS AGENT_OPTIONS WORKLOAD_ARGS...
#                               the workload under the agent: it must exit 0 without hs_err, and
#                               fxcheck must accept each NAME*.json.gz it wrote; the JVM also
#                               takes the options in the array VT_JVM_OPTS (empty by default);
#                               run again (3 runs at most) when the workload says a virtual
#                               thread did no unit of work (starved by the scheduler)

vt_init() {
    local major
    major=$(fx_jdk_major "$2")
    if [[ ${major:-0} -lt 21 ]]; then
        echo "SKIP: $1.jdk${major:-unknown}: virtual threads need JDK 21 or newer (JDK ${major:-unknown} at $2)"
        exit 77
    fi
    it_init "$1.jdk$major" "$2" FXAGENT_VTHREADS_JAR
    VT_JVM_OPTS=()
}

vt_java() {
    local name=$1 carriers=$2 opts=$3 f attempt starved
    shift 3
    for attempt in 1 2 3; do
        rm -f "$FXAGENT_RUN_DIR/$name"*.json.gz
        it_run "$name" "$IT_JDK/bin/java" "-Djdk.virtualThreadScheduler.parallelism=$carriers" \
            "${VT_JVM_OPTS[@]}" "-agentpath:$FXAGENT_LIB=$opts" -cp "$FXAGENT_VTHREADS_JAR" \
            fxagent.vthreads.VThreadWorkload "$@"
        [[ $IT_RC -eq 0 ]] || it_fail "$name: java exited $IT_RC"
        # The workload's own count, not the profile: a virtual thread that did no unit was never
        # scheduled. ForkJoinPool can keep two yielding burners on the carriers and the others
        # in its submission queue for the whole run (CI, loaded: alpha-0/1 ~700k units each,
        # the other four 0); the profile cannot show work that was not done, so run again.
        starved=$(awk '$1 == "units" && $2 != "platform-burn" && $3 == 0 { print $2 }' "$name.out")
        [[ -z $starved ]] && break
        echo "$IT_NAME: $name: the scheduler never ran $(echo "$starved" | tr '\n' ' ')(attempt $attempt of 3)"
        [[ $attempt -lt 3 ]] || it_fail "$name: virtual threads starved by the scheduler in 3 runs"
    done
    it_no_hs_err
    for f in "$FXAGENT_RUN_DIR/$name"*.json.gz; do
        [[ -e $f ]] || continue
        "$FXCHECK" "$f" || it_fail "fxcheck rejected $f"
    done
}
