# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared setup of the marker tests (markers_*_test.sh). CTest passes in the environment:
#   FXAGENT_LIB          libfxagent.so
#   FXAGENT_MARKERS_JAR  fxagent-markers.jar (fxagent.Markers and MarkersWorkload)
#   FXCHECK              the structural checker
#   FXAGENT_RUN_DIR      a directory of this test's own (emptied first; files kept for debugging)
# it_lib.sh gives it_fail, it_no_hs_err and it_run.
source "$(dirname "${BASH_SOURCE[0]}")/it_lib.sh"

# markers_init TESTNAME JDK_HOME: it_init with the markers jar instead of the demo's.
markers_init() {
    it_init "$1" "$2" FXAGENT_MARKERS_JAR
}

# markers_java LOGPREFIX AGENT_ARG|"" WORKLOAD_ARGS...: runs MarkersWorkload (with the agent if
# AGENT_ARG is an -agentpath) through it_run: stdout/stderr to LOGPREFIX.out/.err; sets IT_RC.
markers_java() {
    local log=$1 agent=$2
    shift 2
    local cmd=("$IT_JDK/bin/java" -Xmx512m)
    [[ -n $agent ]] && cmd+=("$agent")
    cmd+=(-cp "$FXAGENT_MARKERS_JAR" fxagent.test.MarkersWorkload "$@")
    it_run "$log" "${cmd[@]}"
}
