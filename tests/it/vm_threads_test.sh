#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The process's threads that are not Java threads (issue 16 items 4-5, agent/sampling/vm_threads.c)
# in cpu mode on one JDK, with the mixed workloads:
#   gc       allocation under -Xmx64m: GC threads ("GC Thread#N", "G1 ...") are tracks with
#            samples in the GC category and libjvm frames named by a function;
#   jit      javac in the JVM: C1/C2 compiler threads are tracks with samples in the JIT compiler
#            category and named libjvm frames, and the method each compiles under its
#            compile_method frame (issue 32), also in the collapsed conversion (jit.txt);
#   cthread  a pthread of libfxmixed.so never attached to the JVM ("fxmixed-burner") is its own
#            track, tid of no Java thread, with fxmixed_cthread_spin over fxmixed_cthread_main
#            in the Native category and no Java frame;
# read through profiler-cli (thread list; thread samples and thread functions of all tracks merged,
# and of the GC/compiler tracks merged) and the profile itself (vm_threads_check.py). Each JVM exits 0
# without hs_err, fxcheck accepts each profile.
# Fails on a build that samples Java threads only (no such track).
# usage: vm_threads_test.sh JDK_HOME   (env: FXAGENT_MIXED_JAR, FXAGENT_MIXED_LIB and it_lib's)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.vm_threads.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_MIXED_JAR
[[ -f ${FXAGENT_MIXED_LIB:-} ]] || it_fail "not built: FXAGENT_MIXED_LIB=${FXAGENT_MIXED_LIB:-}"
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"

# run NAME WORKLOAD SECONDS [OPTIONS]: the workload under the agent (cpu mode, 10 ms, OPTIONS)
# into NAME.json.gz.
run() {
    local profile=$FXAGENT_RUN_DIR/$1.json.gz
    it_run "$1" "$IT_JDK/bin/java" -Xmx64m \
        "-agentpath:$FXAGENT_LIB=mode=cpu,interval=10ms,quiet${4:+,$4},file=$profile" \
        -Dfxagent.mixed.lib="$FXAGENT_MIXED_LIB" -jar "$FXAGENT_MIXED_JAR" "$2" "$3"
    [[ $IT_RC -eq 0 ]] || it_fail "$1: java exited $IT_RC"
    it_no_hs_err
    [[ -s $profile ]] || it_fail "$1: no profile at $profile"
    "$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"
}

run gc gc 4
# codemap=jvmti: the compile tasks' oracle is the "JIT compiled" markers (CompiledMethodLoad,
# not enabled by the default codemap=heap, issue 31)
run jit jit 6 codemap=jvmti
run cthread cthread 3
"$IT_FXPROF" convert "$FXAGENT_RUN_DIR/jit.json.gz" --to collapsed -o "$FXAGENT_RUN_DIR/jit.txt" ||
    it_fail "fxprof convert --to collapsed failed on jit.json.gz"

# Per profile: the track list; the samples and functions views of all tracks at once (one merged
# selection "t-0,t-1,...": every track is rendered, in two profiler-cli calls instead of two per
# track, each a node start of 1-15 s on a loaded machine); and both views of the tracks
# vm_threads_check.py reads (GC threads, compiler threads: --handles), merged too.
pcli_setup
for name in gc jit cthread; do
    pcli_load "$FXAGENT_RUN_DIR/$name.json.gz" || it_fail "profiler-cli could not load $name.json.gz"
    pcli_json "$FXAGENT_RUN_DIR/$name.threads.json" thread list || it_fail "$name: thread list failed"
    all=$(python3 -c 'import json, sys
print(",".join(t["threadHandle"] for t in json.load(open(sys.argv[1]))["threads"]))' \
        "$FXAGENT_RUN_DIR/$name.threads.json")
    pcli_json "$FXAGENT_RUN_DIR/$name.all.samples.json" thread samples --thread "$all" \
        --include-idle || it_fail "$name: thread samples $all failed"
    pcli_json "$FXAGENT_RUN_DIR/$name.all.functions.json" thread functions --thread "$all" \
        --limit 0 || it_fail "$name: thread functions $all failed"
    tracks=$(python3 "$IT_DIR/vm_threads_check.py" --handles "$name" "$FXAGENT_RUN_DIR")
    if [[ -n $tracks ]]; then
        pcli_json "$FXAGENT_RUN_DIR/$name.tracks.samples.json" thread samples --thread "$tracks" ||
            it_fail "$name: thread samples $tracks failed"
        pcli_json "$FXAGENT_RUN_DIR/$name.tracks.functions.json" thread functions \
            --thread "$tracks" --limit 0 || it_fail "$name: thread functions $tracks failed"
    fi
    profiler-cli stop --all >/dev/null 2>&1 || true
done

python3 "$IT_DIR/vm_threads_check.py" --label "$IT_NAME" "$FXAGENT_RUN_DIR" ||
    it_fail "threads that are not Java threads missing or misplaced (see above)"
echo "$IT_NAME: OK"
