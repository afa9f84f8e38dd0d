#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Native frames in wall mode (issue 16 in mode=wall) on one JDK, with the mixed workloads:
#   wait     (default cstack=dwarf) a thread blocked in read(2) on a pipe and one on a loopback
#            socket show the C library's frame and the JNI function under FileDispatcherImpl /
#            SocketDispatcher.read0, with "[state: IN_NATIVE, not on CPU]" as the leaf; a
#            sleeping thread JVM_Sleep* and a libc frame under Thread.sleep* with
#            "[state: SLEEPING]"; a parked one Unsafe_Park with "[state: PARKED]"; each of them
#            mostly in the Idle category (profiler-cli);
#   jni      the JNI burn function fxmixed_burn_cpu under JniBurn.burn in wall mode;
#   wait-off the wait workload with cstack=no: the state frames right above the Java frames, no
#            Native frame (the walk really is what the option says);
# each JVM exits 0 without hs_err and fxcheck accepts each profile; the checks read profiler-cli's
# views (wall_native_check.py). Fails on a build whose wall mode walks no native frame.
# usage: wall_native_test.sh JDK_HOME   (env: FXAGENT_MIXED_JAR, FXAGENT_MIXED_LIB and it_lib's)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.wall_native.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_MIXED_JAR
[[ -f ${FXAGENT_MIXED_LIB:-} ]] || it_fail "not built: FXAGENT_MIXED_LIB=${FXAGENT_MIXED_LIB:-}"
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"
RUN=$FXAGENT_RUN_DIR

# wall NAME WORKLOAD AGENT_OPTIONS: runs the workload for 3 s under mode=wall into NAME.json.gz.
wall() {
    local profile=$RUN/$1.json.gz
    it_run "$1" "$IT_JDK/bin/java" --enable-native-access=ALL-UNNAMED \
        "-agentpath:$FXAGENT_LIB=mode=wall,interval=10ms,quiet,file=$profile${3:+,$3}" \
        -Dfxagent.mixed.lib="$FXAGENT_MIXED_LIB" -jar "$FXAGENT_MIXED_JAR" "$2" 3
    [[ $IT_RC -eq 0 ]] || it_fail "$1: java exited $IT_RC"
    it_no_hs_err
    [[ -s $profile ]] || it_fail "$1: no profile at $profile"
    "$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"
}

wall wait wait
wall jni jni
wall wait-off wait cstack=no

pcli_setup
for p in wait jni wait-off; do
    pcli_load "$RUN/$p.json.gz" || it_fail "profiler-cli could not load $p.json.gz"
    case $p in
    jni) threads=(main) ;;
    *) threads=(waiter-pipe-read waiter-socket-read waiter-sleep waiter-park-0) ;;
    esac
    for t in "${threads[@]}"; do
        pcli_thread_json "$t" "$RUN/pcli-$p-$t-%s.json" top-down samples ||
            it_fail "profiler-cli: no views of thread $t in $p.json.gz"
    done
done

python3 "$IT_DIR/wall_native_check.py" --label "$IT_NAME" "$RUN" ||
    it_fail "wall-mode native frames missing or misplaced (see above)"
echo "$IT_NAME: OK"
