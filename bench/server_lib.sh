# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2154 # jdk, lib, jar, jvm_args: set by the sourcing script
# The ServerWorkload harness shared by bench/run_dump_bench.sh and bench/run_rss_bench.sh: one JVM
# at a time in the background, driven by jcmd, its RSS read from /proc. Source it after setting
#   jdk  the JDK home      lib  libfxagent.so      jar  fxagent-server.jar
# and call fx_server_init PREFIX once; it owns `work` (a temporary folder, removed at exit) and
# `pid` (the running JVM, killed at exit).

# fx_server_init PREFIX: makes $work (/tmp/PREFIX.XXXXXX) and the exit trap.
fx_server_init() {
    work=$(mktemp -d "/tmp/$1.XXXXXX")
    pid=
    trap fx_server_cleanup EXIT
}

fx_server_cleanup() {
    [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null
    rm -rf "$work"
}

# start_jvm TAG AGENT_OPTIONS|"" WORKLOAD_ARGS...: the JVM options of the array jvm_args (may be
# empty), the agent when options are given, then ServerWorkload in the background; waits for its
# ready file. Output goes to $work/TAG.out and .err.
start_jvm() {
    local tag=$1 opts=$2
    shift 2
    local agent=()
    [[ -n $opts ]] && agent=("-agentpath:$lib=$opts")
    rm -f "$work/ready" "$work/stop"
    "$jdk/bin/java" "${jvm_args[@]}" "${agent[@]}" -cp "$jar" fxagent.test.ServerWorkload \
        --ready-file "$work/ready" --stop-file "$work/stop" "$@" \
        >"$work/$tag.out" 2>"$work/$tag.err" &
    pid=$!
    while [[ ! -f $work/ready ]]; do
        kill -0 "$pid" 2>/dev/null || { cat "$work/$tag.err" >&2; exit 1; }
        sleep 0.1
    done
}

stop_jvm() {
    touch "$work/stop"
    wait "$pid" || { echo "the workload exited $?" >&2; exit 1; }
    pid=
}

# cmd TEXT: prints the agent's reply line.
cmd() {
    : >"$work/reply"
    "$jdk/bin/jcmd" "$pid" JVMTI.agent_load "$lib" "\"$1,reply=$work/reply\"" >/dev/null
    cat "$work/reply"
}

# rss_kib: the JVM's VmRSS in KiB.
rss_kib() {
    awk '/VmRSS/ {print $2}' "/proc/$pid/status"
}
