# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared setup of the marker tests (markers_*_test.sh). CTest passes in the environment:
#   FXAGENT_LIB          libfxagent.so
#   FXAGENT_MARKERS_JAR  fxagent-markers.jar (fxagent.Markers and MarkersWorkload)
#   FXCHECK              the structural checker
#   FXAGENT_RUN_DIR      a directory of this test's own (emptied first; files kept for debugging)
# it_lib.sh gives it_fail and it_no_hs_err; its it_init wants the demo jar, which these tests
# do not use, hence markers_init.
source "$(dirname "${BASH_SOURCE[0]}")/it_lib.sh"

# markers_init TESTNAME JDK_HOME: checks the environment, prints the JDK, enters the run dir.
markers_init() {
    IT_NAME=$1
    IT_JDK=$2
    local v
    for v in FXAGENT_LIB FXAGENT_MARKERS_JAR FXCHECK FXAGENT_RUN_DIR; do
        [[ -n "${!v:-}" ]] || it_fail "$v is not set (run through ctest)"
    done
    [[ -f "$FXAGENT_LIB" ]] || it_fail "agent not built: $FXAGENT_LIB"
    [[ -f "$FXAGENT_MARKERS_JAR" ]] || it_fail "markers jar not built: $FXAGENT_MARKERS_JAR"
    [[ -x "$IT_JDK/bin/java" ]] || it_fail "no $IT_JDK/bin/java"
    IT_MAJOR=$(fx_jdk_major "$IT_JDK")
    echo "$IT_NAME: JDK ${IT_MAJOR:-unknown} at $IT_JDK: used"
    rm -rf "$FXAGENT_RUN_DIR"
    mkdir -p "$FXAGENT_RUN_DIR"
    cd "$FXAGENT_RUN_DIR" || it_fail "cannot enter $FXAGENT_RUN_DIR"
}

# markers_java LOGPREFIX AGENT_ARG|"" WORKLOAD_ARGS...: runs MarkersWorkload (with the agent if
# AGENT_ARG is an -agentpath), stdout/stderr to LOGPREFIX.out/.err; sets IT_RC.
markers_java() {
    local log=$1 agent=$2
    shift 2
    local cmd=("$IT_JDK/bin/java" -Xmx512m)
    [[ -n $agent ]] && cmd+=("$agent")
    cmd+=(-cp "$FXAGENT_MARKERS_JAR" fxagent.test.MarkersWorkload "$@")
    echo "$IT_NAME: ${cmd[*]}"
    IT_RC=0
    "${cmd[@]}" >"$log.out" 2>"$log.err" || IT_RC=$?
    sed "s/^/$IT_NAME: stdout: /" "$log.out"
    sed "s/^/$IT_NAME: stderr: /" "$log.err"
    echo "$IT_NAME: exit code $IT_RC"
}
