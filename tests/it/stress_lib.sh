# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared steps of the fault and stress tests (fault_scenario.sh, stress_scenario.sh): the
# StressWorkload JVM under the agent, and the checks of a written profile. Source after it_lib.sh.
# CTest passes FXAGENT_STRESS_JAR besides it_lib.sh's variables.
#
#   st_start LOG AGENT_OPTS [JVM_OPTION...] -- MODE ARGS...   the JVM in the background (ST_PID),
#                                   TMPDIR=$FXAGENT_RUN_DIR/fallback
#   st_wait                         waits for it (at most 120 s); sets ST_RC, prints its output
#   st_run LOG AGENT_OPTS ...       st_start + st_wait
#   st_check FILE [FUNC...]         fxcheck accepts FILE; each FUNC ("a|b" = either) has samples
#                                   on its stack in some thread (stress_check.py); the summary
#                                   goes to FILE.summary.json
#   st_jcmd WHAT                    jcmd PID JVMTI.agent_load LIB "WHAT"; output in ST_JCMD_OUT

ST_PID=

st_cleanup() {
    if [[ -n $ST_PID ]] && kill -0 "$ST_PID" 2>/dev/null; then
        kill -9 "$ST_PID" 2>/dev/null || true
    fi
}
trap st_cleanup EXIT

st_start() {
    local log=$1 opts=$2
    shift 2
    local -a jvm=()
    while [[ $1 != -- ]]; do
        jvm+=("$1")
        shift
    done
    shift
    [[ -f ${FXAGENT_STRESS_JAR:-} ]] || it_fail "stress workload not built: ${FXAGENT_STRESS_JAR:-unset}"
    mkdir -p "$FXAGENT_RUN_DIR/fallback"
    ST_LOG=$log
    local cmd=("$IT_JDK/bin/java")
    [[ -n $opts ]] && cmd+=("-agentpath:$FXAGENT_LIB=$opts")
    cmd+=("${jvm[@]}" -cp "$FXAGENT_STRESS_JAR" fxagent.stress.StressWorkload "$@")
    echo "$IT_NAME: TMPDIR=$FXAGENT_RUN_DIR/fallback ${cmd[*]}"
    TMPDIR=$FXAGENT_RUN_DIR/fallback "${cmd[@]}" >"$log.out" 2>"$log.err" &
    ST_PID=$!
}

st_wait() {
    local i
    for ((i = 0; i < 1200; i++)); do
        kill -0 "$ST_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$ST_PID" 2>/dev/null && { kill -9 "$ST_PID"; echo "$IT_NAME: the JVM ran over 120 s: killed"; }
    ST_RC=0
    wait "$ST_PID" || ST_RC=$?
    # A JVM killed by a signal leaves its attach socket (always in /tmp, whatever TMPDIR says).
    if ((ST_RC > 128)) && [[ -S /tmp/.java_pid$ST_PID ]]; then
        rm -f "/tmp/.java_pid$ST_PID"
    fi
    ST_PID=
    sed "s/^/$IT_NAME: stdout: /" "$ST_LOG.out"
    grep -v '^\[' "$ST_LOG.err" | sed "s/^/$IT_NAME: stderr: /" || true
    echo "$IT_NAME: exit code $ST_RC"
}

st_run() {
    st_start "$@"
    st_wait
}

# Waits for FILE to appear while the JVM runs (at most 60 s).
st_wait_file() {
    local i
    for ((i = 0; i < 600; i++)); do
        [[ -e $1 ]] && return 0
        kill -0 "$ST_PID" 2>/dev/null || { cat "$ST_LOG.err" >&2; it_fail "the JVM exited early"; }
        sleep 0.1
    done
    it_fail "$1 did not appear within 60 s"
}

st_check() {
    local f=$1
    shift
    [[ -s $f ]] || it_fail "no profile at $f"
    "$FXCHECK" --summary-json "$f" >"$f.summary.json" || it_fail "fxcheck rejects $f"
    python3 "$IT_DIR/stress_check.py" "$f.summary.json" "$@" | sed "s/^/$IT_NAME: /"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || it_fail "$f: stress_check.py failed"
}

st_jcmd() {
    # Quoted for the JVM, which splits jcmd's arguments at spaces and '=' (see attach_lib.sh).
    ST_JCMD_OUT=$(timeout 60 "$IT_JDK/bin/jcmd" "$ST_PID" JVMTI.agent_load "\"$FXAGENT_LIB\"" "\"$1\"" 2>&1) || true
    echo "$IT_NAME: jcmd '$1': $(tr '\n' ' ' <<<"$ST_JCMD_OUT")"
}
