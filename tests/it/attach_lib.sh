# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared steps of the production tests (attach_test.sh, attach_agentpath_test.sh, loop_test.sh):
# the server workload in the background, commands through jcmd from the same JDK, and the checks
# every written profile must pass. Source it after it_lib.sh and it_init.
#
#   srv_start LOG [JAVA_OPTION...]  ServerWorkload (2 request threads, ~20 % CPU each) until
#                                   $FXAGENT_RUN_DIR/stop appears; waits for its ready file
#   srv_alive                       fails the test unless the workload still runs
#   srv_finish                      asks it to stop; it must exit 0, print its requests line and
#                                   leave no hs_err file
#   agent CMD                       jcmd PID JVMTI.agent_load LIB "CMD,reply=FILE"; sets AG_CODE
#                                   (the "return code: N" jcmd prints) and AG_REPLY (the file)
#   expect_ok CMD [TEXT]            return code 0, reply "ok: ..." containing TEXT
#   expect_error CODE CMD [TEXT]    return code CODE, reply "error: ..." containing TEXT
#   reply_path                      the file named by AG_REPLY ("... to PATH (..." or, after a
#                                   fallback, "...; wrote PATH instead (...")
#   wait_samples N                  polls status until the agent has taken N samples
#   check_profile FILE [pcli]       fxcheck accepts FILE and the hot method leads the request
#                                   threads (attach_check.py); with "pcli", profiler-cli loads it
#                                   and lists the hot method on request-worker-1
# CTest passes FXAGENT_SERVER_JAR besides it_lib.sh's variables.

HOT_METHOD=fxagent.test.ServerWorkload.hotChecksum
AG_LIB=${AG_LIB:-}
AG_N=0
SRV_PID=

srv_cleanup() {
    if [[ -n $SRV_PID ]] && kill -0 "$SRV_PID" 2>/dev/null; then
        kill -9 "$SRV_PID" 2>/dev/null || true
    fi
}

srv_start() {
    local log=$1
    shift
    [[ -f ${FXAGENT_SERVER_JAR:-} ]] || it_fail "server workload not built: ${FXAGENT_SERVER_JAR:-unset}"
    SRV_LOG=$log
    rm -f "$FXAGENT_RUN_DIR/ready" "$FXAGENT_RUN_DIR/stop"
    mkdir -p "$FXAGENT_RUN_DIR/fallback"
    # hotChecksum is kept out of line: inlined by C2 into the request loop, its samples go to
    # parseRequest (~90 %) once non-safepoint debug info is recorded (what CompiledMethodLoad
    # turns on), and are right with -XX:-DebugNonSafepoints: a HotSpot attribution issue these
    # tests are not about (ServerWorkload.java).
    local cmd=("$IT_JDK/bin/java" -XX:CompileCommand=quiet
        "-XX:CompileCommand=dontinline,fxagent.test.ServerWorkload::hotChecksum"
        "$@" -cp "$FXAGENT_SERVER_JAR" fxagent.test.ServerWorkload
        --threads 2 --rate 100 --work-us 2000 --seconds 900
        --ready-file "$FXAGENT_RUN_DIR/ready" --stop-file "$FXAGENT_RUN_DIR/stop")
    echo "$IT_NAME: TMPDIR=$FXAGENT_RUN_DIR/fallback ${cmd[*]}"
    TMPDIR=$FXAGENT_RUN_DIR/fallback "${cmd[@]}" >"$log.out" 2>"$log.err" &
    SRV_PID=$!
    trap 'srv_cleanup; pcli_teardown' EXIT
    local i
    for ((i = 0; i < 600; i++)); do
        [[ -f $FXAGENT_RUN_DIR/ready ]] && return 0
        kill -0 "$SRV_PID" 2>/dev/null || { cat "$log.err" >&2; it_fail "the workload exited early"; }
        sleep 0.1
    done
    it_fail "the workload was not ready within 60 s"
}

srv_alive() {
    kill -0 "$SRV_PID" 2>/dev/null || it_fail "the JVM is gone ($1)"
}

srv_finish() {
    touch "$FXAGENT_RUN_DIR/stop"
    SRV_RC=0
    wait "$SRV_PID" || SRV_RC=$?
    SRV_PID=
    sed "s/^/$IT_NAME: stdout: /" "$SRV_LOG.out"
    sed "s/^/$IT_NAME: stderr: /" "$SRV_LOG.err"
    [[ $SRV_RC -eq 0 ]] || it_fail "the workload exited $SRV_RC"
    grep -q '^requests=[1-9]' "$SRV_LOG.out" || it_fail "the workload printed no requests line"
    it_no_hs_err
}

agent() {
    local lib=${AG_LIB:-$FXAGENT_LIB} what=$1 out
    local reply=$FXAGENT_RUN_DIR/reply.$((++AG_N))
    : >"$reply"
    # jcmd joins its arguments with spaces and the JVM splits them again at spaces and '=': the
    # quotes keep a path with a space, and "start,interval=10ms", whole.
    out=$(timeout 120 "$IT_JDK/bin/jcmd" "$SRV_PID" JVMTI.agent_load "\"$lib\"" "\"$what,reply=$reply\"" 2>&1) ||
        it_fail "jcmd failed for '$what': $out"
    AG_CODE=$(sed -n 's/^return code: \(-\{0,1\}[0-9]*\)$/\1/p' <<<"$out")
    [[ -n $AG_CODE ]] || it_fail "jcmd printed no return code for '$what': $out"
    AG_REPLY=$(cat "$reply")
    echo "$IT_NAME: '$what' -> return code $AG_CODE; reply: $AG_REPLY"
}

expect_ok() {
    agent "$1"
    [[ $AG_CODE -eq 0 ]] || it_fail "'$1' returned $AG_CODE"
    [[ $AG_REPLY == "ok: "* ]] || it_fail "'$1': the reply is not an ok line: $AG_REPLY"
    [[ -z ${2:-} || $AG_REPLY == *"$2"* ]] || it_fail "'$1': the reply lacks '$2'"
}

expect_error() {
    agent "$2"
    [[ $AG_CODE -eq $1 ]] || it_fail "'$2' returned $AG_CODE, expected $1"
    [[ $AG_REPLY == "error: "* ]] || it_fail "'$2': the reply is not an error line: $AG_REPLY"
    [[ -z ${3:-} || $AG_REPLY == *"$3"* ]] || it_fail "'$2': the reply lacks '$3'"
    srv_alive "after '$2'"
}

reply_path() {
    # The path may hold spaces: a fallback's "; wrote /Y instead (", else " to /X (N bytes".
    sed -n -e 's/.*; wrote \(\/.*\) instead (.*/\1/p' -e 't' \
        -e 's/.* to \(\/.*\) ([0-9]* bytes.*/\1/p' <<<"$AG_REPLY"
}

wait_samples() {
    local want=$1 i n
    for ((i = 0; i < 120; i++)); do
        agent status
        n=$(sed -n 's/.* \([0-9]*\) samples taken.*/\1/p' <<<"$AG_REPLY")
        [[ -n $n && $n -ge $want ]] && return 0
        sleep 0.5
    done
    it_fail "fewer than $want samples after 60 s"
}

# Prints the number of samples fxcheck counted.
check_profile() {
    local file=$1 how=${2:-} base out
    base=$(basename "$file" .json.gz)
    [[ -s $file ]] || it_fail "no profile at $file"
    out=$("$FXCHECK" "$file") || it_fail "fxcheck rejected $file: $out"
    # The real fxcheck: the line above held the file to the totals (fxcheck_totals.sh) already.
    "$IT_FXCHECK_REAL" --summary-json "$file" >"$base.summary.json" || it_fail "fxcheck --summary-json $file"
    python3 "$IT_DIR/attach_check.py" "$base.summary.json" "$HOT_METHOD" >&2 ||
        it_fail "$file: the hot method does not lead the request threads"
    if [[ $how == pcli ]]; then
        pcli_load "$file" >&2 || it_fail "profiler-cli could not load $file"
        pcli_thread_json request-worker-1 "$base.pcli-%s.json" functions ||
            it_fail "profiler-cli could not read request-worker-1 of $file (see above)"
        grep -q "\"$HOT_METHOD\"" "$base.pcli-functions.json" ||
            it_fail "profiler-cli does not list $HOT_METHOD on request-worker-1 of $file"
    fi
    sed -n 's/.*, \([0-9]*\) samples,.*/\1/p' <<<"$out"
}
