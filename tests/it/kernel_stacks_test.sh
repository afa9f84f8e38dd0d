#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kernel frames in cpu mode (issue 16, kstack=yes) on one JDK: the mixed workload `devnull` (a
# thread writing one byte per write(2) to /dev/null) profiled in mode=cpu with the perf engine
# shows kernel frames of the write path (ksys_write, vfs_write, a system call entry) in the
# Kernel category, above the native frames, under FileOutputStream.write*; with kstack=no it
# shows none and says why; a third JVM names its kernel frames from the symbols the first kept
# in the cache folder (0600). The profile is read as JSON (kernel_stacks_check.py) and through
# profiler-cli (the thread's category breakdown and call tree). Skips (exit 77, one reason line)
# when the profile itself says kernel frames cannot be had here (no perf_events, the timer
# engine, perf_event_paranoid, kallsyms unreadable). Fails on a build without kernel frames.
# usage: kernel_stacks_test.sh JDK_HOME   (env: FXAGENT_MIXED_JAR, FXAGENT_MIXED_LIB and it_lib's)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.kernel_stacks.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_MIXED_JAR
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"

# run NAME AGENT_OPTIONS [SECONDS]: the devnull workload for SECONDS (3) under the agent into
# NAME.json.gz.
run() {
    local profile=$FXAGENT_RUN_DIR/$1.json.gz
    it_run "$1" "$IT_JDK/bin/java" \
        "-agentpath:$FXAGENT_LIB=mode=cpu,interval=10ms,quiet,file=$profile${2:+,$2}" \
        -jar "$FXAGENT_MIXED_JAR" devnull "${3:-3}"
    [[ $IT_RC -eq 0 ]] || it_fail "$1: java exited $IT_RC"
    it_no_hs_err
    [[ -s $profile ]] || it_fail "$1: no profile at $profile"
    "$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"
}

run devnull ""
why=$(python3 "$IT_DIR/kernel_stacks_check.py" --why "$FXAGENT_RUN_DIR/devnull.json.gz") ||
    it_fail "devnull: cannot read the profile's 'Kernel stacks' metadata"
if [[ -n $why ]]; then
    echo "$IT_NAME: SKIP: kernel frames unavailable here: $why"
    exit 77
fi
run devnull-off kstack=no
# The kernel's symbols kept by devnull in this test's cache folder (it_lib.sh's FXAGENT_CACHE)
# and read from there by the next JVM (include/fx_kallsyms.h).
run devnull-cached "" 1

pcli_available || it_fail "profiler-cli is not installed (npm install -g @firefox-devtools/profiler-cli)"
pcli_setup
pcli_load "$FXAGENT_RUN_DIR/devnull.json.gz" || it_fail "profiler-cli could not load devnull.json.gz"
pcli_json pcli-threads.json thread list || it_fail "profiler-cli thread list failed"
pcli_thread_json devnull-writer "pcli-%s.json" samples top-down ||
    it_fail "profiler-cli could not read thread devnull-writer"

python3 "$IT_DIR/kernel_stacks_check.py" --label "$IT_NAME" "$FXAGENT_RUN_DIR" ||
    it_fail "kernel frames missing or misplaced (see above)"
echo "$IT_NAME: OK"
