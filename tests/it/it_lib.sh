# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared setup of the JDK integration tests (demo_test.sh, bad_option_test.sh, repeat_test.sh).
# CTest passes the build's artefacts in the environment:
#   FXAGENT_LIB       libfxagent.so
#   FXAGENT_DEMO_JAR  fxagent-demo.jar
#   FXCHECK           the structural checker
#   FXAGENT_RUN_DIR   a directory of this test's own (emptied first; files are kept for debugging)

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/it/jdks.sh
source "$IT_DIR/jdks.sh"

it_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# it_init TESTNAME JDK_HOME [JAR_VARIABLE]: checks the environment (the jar named by
# JAR_VARIABLE, default FXAGENT_DEMO_JAR, must exist), prints the JDK used, enters the run dir.
it_init() {
    IT_NAME=$1
    IT_JDK=$2
    local v jar=${3:-FXAGENT_DEMO_JAR}
    for v in FXAGENT_LIB "$jar" FXCHECK FXAGENT_RUN_DIR; do
        [[ -n "${!v:-}" ]] || it_fail "$v is not set (run through ctest)"
    done
    [[ -f "$FXAGENT_LIB" ]] || it_fail "agent not built: $FXAGENT_LIB"
    [[ -f "${!jar}" ]] || it_fail "jar not built: ${!jar}"
    [[ -x "$IT_JDK/bin/java" ]] || it_fail "no $IT_JDK/bin/java"
    # Every profile a test hands to fxcheck is also held to issue 30's one total: the agent's
    # exit line, Profile Info and fxprof summary agree (fxcheck_totals.sh, totals_check.py).
    if [[ -z ${IT_FXCHECK_REAL:-} ]]; then
        export IT_FXCHECK_REAL=$FXCHECK IT_DIR
        export IT_FXPROF=${FXPROF:-$(dirname "$FXAGENT_LIB")/../cli/fxprof}
        export FXCHECK=$IT_DIR/fxcheck_totals.sh
    fi
    IT_MAJOR=$(fx_jdk_major "$IT_JDK")
    echo "$IT_NAME: JDK ${IT_MAJOR:-unknown} at $IT_JDK: used"
    # The JDK's build from its release file (what `java -version` prints, without starting a
    # JVM: 0.15-0.2 CPU-s and 0.25-0.4 s at load 8, in each of 114 tests; the test's own JVM
    # runs still fail it if the JDK cannot start).
    if [[ -r $IT_JDK/release ]] && grep -q '^JAVA_RUNTIME_VERSION=' "$IT_JDK/release"; then
        grep -E '^(IMPLEMENTOR|IMPLEMENTOR_VERSION|JAVA_RUNTIME_VERSION|JVM_VARIANT)=' \
            "$IT_JDK/release" | sed "s/^/$IT_NAME: /"
    else
        "$IT_JDK/bin/java" -version 2>&1 | sed "s/^/$IT_NAME: /"
    fi
    rm -rf "$FXAGENT_RUN_DIR"
    mkdir -p "$FXAGENT_RUN_DIR"
    cd "$FXAGENT_RUN_DIR" || it_fail "cannot enter $FXAGENT_RUN_DIR"
    # What the agent keeps across starts (include/fx_cache_dir.h: unwind tables, the kernel's
    # symbols): each test its own folder, starting empty, so no test depends on another's run
    # nor writes into $HOME.
    export FXAGENT_CACHE=$FXAGENT_RUN_DIR/cache
}

# it_run LOGPREFIX COMMAND...: runs COMMAND in the run dir (the JVM writes any hs_err file
# here), stdout/stderr to LOGPREFIX.out/.err, both printed after it with the exit code and the
# time taken; sets IT_RC.
it_run() {
    local log=$1 start=$SECONDS
    shift
    echo "$IT_NAME: $*"
    IT_RC=0
    "$@" >"$log.out" 2>"$log.err" || IT_RC=$?
    sed "s/^/$IT_NAME: stdout: /" "$log.out"
    sed "s/^/$IT_NAME: stderr: /" "$log.err"
    echo "$IT_NAME: exit code $IT_RC after $((SECONDS - start)) s"
}

# it_java LOGPREFIX AGENT_OPTIONS DEMO_ARGS...: it_run of the demo under the agent.
it_java() {
    local log=$1 opts=$2
    shift 2
    it_run "$log" "$IT_JDK/bin/java" "-agentpath:$FXAGENT_LIB=$opts" -cp "$FXAGENT_DEMO_JAR" \
        fxagent.demo.Demo "$@"
}

# Fails if the JVM left a crash report anywhere in the run dir.
it_no_hs_err() {
    local crash
    crash=$(find "$FXAGENT_RUN_DIR" -name 'hs_err_pid*.log' | head -n 5)
    if [[ -n "$crash" ]]; then
        echo "$crash" | while read -r f; do
            echo "--- $f (head)" >&2
            head -n 40 "$f" >&2
        done
        it_fail "JVM crash report(s) in $FXAGENT_RUN_DIR"
    fi
}
