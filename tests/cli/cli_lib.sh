# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared setup of fxprof's tests. CTest passes in the environment:
#   FXPROF             the fxprof binary
#   FXPROF_FAKE_AGENT  tests/cli/fake_agent.c built as a JVMTI library
#   FXSYNTH            tests/tools/fxsynth, or empty when not built
#   FXAGENT_LIB        libfxagent.so, or empty when not built
#   FXAGENT_DEMO_CLASSES  java-test's compiled classes
#   FXCLI_TESTS        this directory
#   FXAGENT_RUN_DIR    a directory of this test's own (emptied first, kept for debugging)

CLI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/it/jdks.sh
source "$CLI_DIR/../it/jdks.sh"

cli_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

cli_skip() {
    echo "SKIP: $*"
    exit 77
}

# cli_init NAME: checks the environment and enters a fresh run directory.
cli_init() {
    CLI_NAME=$1
    [[ -n "${FXPROF:-}" && -x "$FXPROF" ]] || cli_fail "FXPROF is not set or not executable (run through ctest)"
    [[ -n "${FXAGENT_RUN_DIR:-}" ]] || cli_fail "FXAGENT_RUN_DIR is not set (run through ctest)"
    rm -rf "$FXAGENT_RUN_DIR"
    mkdir -p "$FXAGENT_RUN_DIR"
    cd "$FXAGENT_RUN_DIR" || cli_fail "cannot enter $FXAGENT_RUN_DIR"
}

# cli_run LOG CMD...: runs CMD with stdout in LOG.out and stderr in LOG.err; sets CLI_RC.
cli_run() {
    local log=$1
    shift
    CLI_RC=0
    "$@" >"$log.out" 2>"$log.err" || CLI_RC=$?
    echo "$CLI_NAME: \$ ${*} -> exit $CLI_RC"
    # head reads the file itself: a reader that stops early would SIGPIPE sed under pipefail.
    head -n 20 "$log.out" | sed "s/^/    out: /"
    head -n 20 "$log.err" | sed "s/^/    err: /"
}

# cli_expect_error LOG PATTERN CMD...: CMD must fail with exactly one stderr line that starts
# with "fxprof: " and matches the extended regex PATTERN, and print nothing on stdout.
cli_expect_error() {
    local log=$1 pattern=$2
    shift 2
    cli_run "$log" "$@"
    [[ $CLI_RC -ne 0 ]] || cli_fail "$log: exit code 0, expected a failure"
    [[ $(wc -l <"$log.err") -eq 1 ]] || cli_fail "$log: stderr has $(wc -l <"$log.err") lines, expected one"
    grep -q '^fxprof: ' "$log.err" || cli_fail "$log: stderr does not start with 'fxprof: '"
    grep -Eq -- "$pattern" "$log.err" || cli_fail "$log: stderr does not match /$pattern/"
    [[ ! -s "$log.out" ]] || cli_fail "$log: unexpected output on stdout"
}

# cli_start_sleeper JDK_HOME LOG [JAVA_OPTION...]: starts tests/cli/Sleeper.java (source
# launcher) and waits until it prints "ready"; sets CLI_JVM_PID.
cli_start_sleeper() {
    local jdk=$1 log=$2
    shift 2
    "$jdk/bin/java" -Xshare:auto "$@" "$CLI_DIR/Sleeper.java" 300 >"$log.out" 2>"$log.err" &
    CLI_JVM_PID=$!
    for _ in $(seq 1 600); do
        grep -q '^ready$' "$log.out" && return 0
        kill -0 "$CLI_JVM_PID" 2>/dev/null || cli_fail "the JVM exited early: $(cat "$log.err")"
        sleep 0.1
    done
    cli_fail "the JVM did not start within 60 s"
}

cli_stop_sleeper() {
    if [[ -n "${CLI_JVM_PID:-}" ]]; then
        kill "$CLI_JVM_PID" 2>/dev/null || true
        wait "$CLI_JVM_PID" 2>/dev/null || true
        CLI_JVM_PID=
    fi
}

# cli_serve LOG CMD...: starts CMD (fxprof open or compare) in the background with stdout in
# LOG.out and stderr in LOG.err, and waits up to 30 s for its link line ("Open ... in the
# Firefox Profiler: LINK"); sets SERVER_PID and LINK.
cli_serve() {
    local log=$1
    shift
    : >"$log.out" # made here: the background job's own redirection may come after the first read
    "$@" >"$log.out" 2>"$log.err" &
    SERVER_PID=$!
    LINK=""
    for _ in $(seq 1 300); do
        LINK=$(sed -n 's/^Open .*in the Firefox Profiler: //p' "$log.out")
        [[ -n $LINK ]] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || cli_fail "$log: $1 exited: $(cat "$log.err")"
        sleep 0.1
    done
    cli_fail "$log: no link within 30 s"
}
