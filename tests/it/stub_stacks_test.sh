#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Samples in StubRoutines stubs (issue 32 item 4): java-test/stacks' fxagent.stacks.Stubs under
# the agent in cpu mode at 2 ms, 3 s per case (longer while the thread has used under half of
# that in CPU time: a loaded machine; java-test/stacks' Budget.java, its line prints cpu_ms), on
# thread "stubs":
#   delete      StringBuilder.delete (the arraycopy stub): of the samples on the CPU, >= 90 %
#               under StringBuilder.delete, >= 80 % with an arraycopy stub frame above it;
#   intrinsics  CRC32, Adler32, MD5, SHA-1, SHA-256, Base64, a round out of line (not in the
#               loop's OSR compilation, whose calls are refused): the stubs recovered where the
#               first PcDesc after the return address is where the call's node ends (JDK 17: at it;
#               JDK 25: after the post-call nop; else a partial stack, always for C2's fill
#               stubs), failures in them on at most 2 %; the loop thread's samples rooted at a
#               Java failure pseudo-frame and those of <= 2 frames each under 1 %
#               (async-profiler's RecoveryTests.intrinsics bounds); their
#               stacks walked below to the thread's start (native_below.c steps over the stub):
#               at most 1 % rooted at "[native: walk stopped (Java frames not walked to the call
#               stub)]", at most 15 % of the thread's samples on the CPU (were 25-35 %); the
#               new arrays DigestBase.engineDigest zeroes in C2's clear_mem loop (a sample on
#               its store follows `js rel8` whose displacement is a push's byte): at least 5
#               walks below from a C2 frame after such a byte reach the thread's first frame,
#               at most a quarter of that refused or stopped (docs/VALIDATION.md 8.1: C2's
#               instruction before pc decoded; without the decode all refused);
#   both        failures in an arraycopy stub ("[AGCT: ..." under one) on at most 0.5 % of the
#               samples on the CPU (at least one allowed; delete: any failure on at most 5 %),
#               every recovered stub frame right over its known caller (delete:
#               AbstractStringBuilder.shift), and meta.extra's count of stub-frame recoveries
#               equal to the samples that show one;
#   millis      System.currentTimeMillis in a loop (2 s; issue 32, async-profiler's
#               RecoveryTests.currentTimeMillis): os::javaTimeMillis always right over
#               Stubs.millis, stacks recovered from native code called as a leaf, failure
#               pseudo-frames on at most 25 % of the loop's samples; the same loop calls
#               System.nanoTime first in Stubs.nanos (inlined): os::javaTimeNanos right over
#               Stubs.nanos right over Stubs.millis (or its native method's frames), at most 25 %
#               of its samples with a failure right under it (docs/VALIDATION.md 8.5a: the
#               caller at bci 0 of an inlined method; 100 % refused before session 24);
#   subtype     instanceof misses of the secondary super cache under C1 only (2 s,
#               -XX:TieredStopAtLevel=1, Stubs.subtypes not inlined; docs/VALIDATION.md 8.5g):
#               at least 10 samples with a recovered slow_subtype_check frame, each right over
#               Stubs.subtypes under Stubs.subtype, meta.extra's count equal to them, failures in
#               the stub on at most 5 % of the loop's samples;
#   barrier     new objects stored into a humongous array under C1 and G1 without concurrent
#               refinement threads, no pending cards left for the pause (2 s): at least 5
#               samples with a recovered g1_post_barrier_slow frame, each right over
#               Stubs.stores, none rooted at "[native: walk stopped (Java frames not walked to
#               the call stub)]" (the walk below steps over the stub as the recovery does);
#               at least 5 with G1's refinement (VM code the stub called, docs/VALIDATION.md
#               8.5i) above the stub, failures over that VM code on at most 25 % of its samples;
#   clinit      a static initializer run by a C1-compiled method's first call into its class (2 s,
#               -XX:TieredStopAtLevel=1 -Xbatch; its loop C1-OSR-compiled): its samples whole, the native frames of the VM's
#               call back into Java (SharedRuntime::resolve_static_call_C among them) right under
#               Stubs.make, whose call went through the resolve blob (the walk below crosses the
#               blob's frame: native_below.c).
#   throws      a preallocated exception thrown and caught in compiled code (2 s, neither
#               method inlined): HotSpot's exception dispatch, VM code called from Java with the
#               frame anchor set (8.5i): every such stack recovered from the anchor on the known
#               path Stubs.throwing;catcher[;thrower], at least 5, "[AGCT: not walkable
#               (Java)]" under VM code on at most 2 % of the loop's samples.
#   entry       (JDK 25 only) compiled methods entered after each concurrent G1 cycle armed their
#               entry barriers (2 s, on to 100 rounds): samples in nmethod_stub_entry_barrier walked
#               through method_entry_barrier, at least 5 right over a Stubs.entN right over
#               Stubs.entered (8.5j), none over a wrong caller, failures on at most 25 % of them
#               (all before the rule).
#   mh          a MethodHandle in a field invoked exactly from Stubs.mhRound (1 s, not inlined,
#               no LambdaForm customization): compiled code calls MethodHandle.invokeBasic's
#               frameless nmethod (8.5l), whose target DirectMethodHandle$Holder.invokeStatic
#               calls linkToStatic's: at least 10 samples in invokeBasic, failures on at most 5 %
#               (all of them before the rule), each recovered one over Stubs.mhRound over
#               Stubs.mh from the thread's start; at least 5 in linkToStatic right over
#               Holder.invokeStatic, none named invokeBasic there (CompiledMethodLoad's name for
#               every intrinsic). On the default codemap=heap: the code heap lookup names these
#               nmethods by their intrinsic id (session 25; before: none named, ~80 samples
#               "[AGCT: unknown Java]" with no leaf).
# Each JVM exits 0 without hs_err and fxcheck accepts each profile; stub_stacks_check.py reads
# them. Fails without the stub rule (recover_stub.c): delete's samples are then "[AGCT: unknown
# Java]" over the stub's name.
# usage: stub_stacks_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.stub_stacks.jdk$(fx_jdk_major "$1")" "$1"
[[ -n "${FXAGENT_STACKS_JAR:-}" && -f "$FXAGENT_STACKS_JAR" ]] ||
    it_fail "stacks jar not built: ${FXAGENT_STACKS_JAR:-FXAGENT_STACKS_JAR not set}"

for c in delete intrinsics millis subtype barrier clinit throws entry mh; do
    # the nmethod entry barrier's stub is JDK 25's under G1 (JDK 17: ZGC's and Shenandoah's)
    [[ $c == entry && $IT_MAJOR -lt 25 ]] && continue
    profile=$FXAGENT_RUN_DIR/$c.json.gz
    flags=()
    [[ $c == subtype ]] && flags=(-XX:TieredStopAtLevel=1 -XX:CompileCommand=quiet
        -XX:CompileCommand=dontinline,fxagent.stacks.Stubs::subtypes)
    # a round of the intrinsics out of line: not inlined into the loop's OSR compilation
    [[ $c == intrinsics ]] && flags=(-XX:CompileCommand=quiet
        -XX:CompileCommand=dontinline,fxagent.stacks.Stubs::intrinsicRound)
    # no concurrent refinement threads and no pending cards left for the pause: the stubs
    # thread refines the cards itself (G1's refinement above the stub). With the threads, on a
    # quiet machine they keep up and the thread never refines: 0 such samples (CI, session 19);
    # without them but with the pause's share, JDK 25's target of pending cards stays above
    # what a fast thread logs between its pauses (3-4 such samples, session 20).
    [[ $c == barrier ]] && flags=(-XX:TieredStopAtLevel=1 -XX:+UseG1GC
        -XX:G1ConcRefinementThreads=0 -XX:G1RSetUpdatingPauseTimePercent=0)
    # with OSR: <clinit>'s loop is C1-OSR-compiled, its code before the OSR entry, where the
    # walk below starts since session 22 (docs/VALIDATION.md 8.1; before: 16-19 % of the
    # samples in <clinit> cut at the top, against the check's 5 %)
    [[ $c == clinit ]] && flags=(-XX:TieredStopAtLevel=1 -Xbatch)
    [[ $c == throws ]] && flags=(-XX:CompileCommand=quiet
        -XX:CompileCommand=dontinline,fxagent.stacks.Stubs::catcher
        -XX:CompileCommand=dontinline,fxagent.stacks.Stubs::thrower)
    # without customization the handle's LambdaForm stays the shared one, whose compiled code
    # calls the linkToStatic intrinsic (a customized one inlines its target)
    [[ $c == mh ]] && flags=(-XX:CompileCommand=quiet
        -XX:CompileCommand=dontinline,fxagent.stacks.Stubs::mhRound
        -Djava.lang.invoke.MethodHandle.CUSTOMIZE_THRESHOLD=-1)
    [[ $c == entry ]] && flags=(-XX:+UseG1GC -XX:+ExplicitGCInvokesConcurrent
        -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,fxagent.stacks.Stubs::ent*)
    it_run "$c" "$IT_JDK/bin/java" "-agentpath:$FXAGENT_LIB=mode=cpu,interval=2ms,quiet,file=$profile" \
        "${flags[@]}" -cp "$FXAGENT_STACKS_JAR" fxagent.stacks.Stubs "$c" \
        "$(case $c in millis | subtype | barrier | clinit | throws) echo 2 ;; mh) echo 1 ;; *) echo 3 ;; esac)"
    [[ $IT_RC -eq 0 ]] || it_fail "$c: java exited $IT_RC"
    it_no_hs_err
    [[ -s $profile ]] || it_fail "$c: no profile at $profile"
    "$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"
done
python3 "$IT_DIR/stub_stacks_check.py" --label "$IT_NAME" "$FXAGENT_RUN_DIR" ||
    it_fail "stub samples not recovered (see above)"
echo "$IT_NAME: OK"
