#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Frame types by known answers (issue 32 item 1) and honest stack ends (issue 30 item 3):
# java-test/frametypes (thread types-worker: work -> caller -> tiny, notInlined) three times,
# each JVM ~3 s:
#   xint     -Xint, depth=D/M, D the worker's depth at caller, M = D - 2 (async-profiler's
#            jstackdepth=N/M, its DepthTests): every typed Java frame Interpreted; a worker stack
#            whose leaf is caller is whole (D frames, over M), one whose leaf is notInlined or
#            tiny has "[truncated]" at its root over its M - 1 leaf-most frames: M frames of
#            every kind, "[truncated]" one of them (depth= counts every frame, issue 32 item 7;
#            depth=N without /M: it.mixed_stacks' deep-depth)
#   c1       -XX:TieredStopAtLevel=1, mode=wall (interval=2ms): compiled frames only C1's, none
#            C2's; thread main, waiting in Thread.join, typed from its frame anchor: its Java
#            frames Interpreted
#   tiered   the default with -XX:CompileCommand=dontinline for notInlined: notInlined never
#            Inlined and C2 in most samples, tiny Inlined (into caller) in most; no
#            "[truncated]" in the worker's stacks (nothing reaches the depth; start-up's class
#            loading, Java and VM frames interleaved, may)
# caller is dontinline too (every run): work runs once, so its compiled code is OSR code, and a
# sample whose pc is in OSR code was untyped until issue 32's OSR entry rule (recover.c); when C2's
# OSR compilation of work inlined caller (and tiny with it: timing, whether caller's own C2 code
# was there first), tiny's samples were all in work's OSR code, untyped, and the tiered answer
# depended on the load of the machine. caller's own nmethod keeps tiny's samples in normal code.
# tiered runs with codemap=heap (issue 31, the default since session 24: no CompiledMethodLoad;
# nmethods from the code heaps, their inlining from their own scopes), c1 with codemap=jvmti
# (the event's path stays covered), xint with the default.
# Each: the workload prints DebugNonSafepoints=true, set by the agent in tiered (codemap=heap),
# by HotSpot for CompiledMethodLoad in c1; false in xint, where the test gives
# -XX:-DebugNonSafepoints: the user's wins; the JVM exits 0 without hs_err, fxcheck accepts the
# profile, the worker's Java frames
# are mostly typed, and `fxprof convert --to collapsed --annotate` gives the same types as
# suffixes (frame_types_check.py); --annotate with --to pprof is refused with one line.
# usage: frame_types_test.sh JDK_HOME [SECONDS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
seconds=${2:-3}
name="it.frame_types.jdk$(fx_jdk_major "$1")"
it_init "$name" "$1" FXAGENT_FRAMETYPES_JAR
[[ -x "${FXPROF:-}" ]] || it_fail "fxprof not built: ${FXPROF:-FXPROF not set}"

# xint's depth=D/M: D the worker's depth at caller, read from the tiered run (JDK 17: 5, JDK 25:
# 6: Thread.runWith), so that a stack ending in caller is exactly D deep (not cut) and one
# ending in notInlined or tiny is one deeper (cut to M, "[truncated]" at its root).
for config in tiered c1 xint; do
    case $config in
    xint)
        xint_depth=$(python3 "$IT_DIR/frame_types_check.py" --xint-depth "$FXAGENT_RUN_DIR/tiered.json.gz") ||
            it_fail "no depth of caller in the tiered profile"
        # cstack=no: the depth counts the Java frames alone here (the native frames below
        # them, issue 32, would cut every stack)
        flags=(-Xint -XX:-DebugNonSafepoints)
        opts=mode=cpu,interval=1ms,depth=$xint_depth,cstack=no
        ;;
    c1) flags=(-XX:TieredStopAtLevel=1) opts=mode=wall,interval=2ms,depth=64,codemap=jvmti ;;
    tiered) flags=() opts=mode=cpu,interval=1ms,depth=64,codemap=heap ;;
    esac
    profile=$FXAGENT_RUN_DIR/$config.json.gz
    # shellcheck disable=SC2054 # the commas belong to the JVM options
    # UnlockDiagnosticVMOptions: HotSpotDiagnosticMXBean shows a diagnostic flag only then
    it_run "$config" "$IT_JDK/bin/java" -XX:+UnlockDiagnosticVMOptions "${flags[@]}" \
        -XX:CompileCommand=quiet \
        -XX:CompileCommand=dontinline,fxagent.test.FrameTypes::notInlined \
        -XX:CompileCommand=dontinline,fxagent.test.FrameTypes::caller \
        "-agentpath:$FXAGENT_LIB=$opts,file=$profile" \
        -cp "$FXAGENT_FRAMETYPES_JAR" fxagent.test.FrameTypes "$seconds"
    [[ $IT_RC -eq 0 ]] || it_fail "$config: java exited $IT_RC"
    # issue 31: with codemap=heap the agent sets DebugNonSafepoints at its default (no
    # CompiledMethodLoad does it); the user's -XX:-DebugNonSafepoints (xint) wins
    want=true
    [[ $config == xint ]] && want=false
    grep -qx "DebugNonSafepoints=$want" "$config.out" ||
        it_fail "$config: the workload did not print DebugNonSafepoints=$want"
    it_no_hs_err
    [[ -s $profile ]] || it_fail "$config: no profile at $profile"
    "$FXCHECK" "$profile" || it_fail "$config: fxcheck rejected $profile"
    "$FXPROF" convert "$profile" --to collapsed --annotate -o "$config.collapsed" ||
        it_fail "$config: fxprof convert --annotate failed"
done
# --annotate is for collapsed only: refused with one line (exit 2), nothing written
rc=0
"$FXPROF" convert "$FXAGENT_RUN_DIR/tiered.json.gz" --to pprof --annotate -o refused.pb.gz \
    2>refused.err || rc=$?
[[ $rc -eq 2 && ! -e refused.pb.gz && $(wc -l <refused.err) -eq 1 ]] ||
    it_fail "convert --to pprof --annotate: exit $rc, $(cat refused.err)"
python3 "$IT_DIR/frame_types_check.py" --label "$name" "$FXAGENT_RUN_DIR" ||
    it_fail "frame types are not the known answers (see above)"
echo "$name: OK"
