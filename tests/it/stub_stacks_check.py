#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the profiles of stub_stacks_test.sh (issue 32 item 4: samples in StubRoutines stubs).

usage: stub_stacks_check.py --label NAME RUN_DIR   (reads delete, intrinsics, millis, subtype,
       barrier, clinit, throws, entry, mh .json.gz)
Thread "stubs", samples on the CPU (an "[idle]" leaf is no such sample):
  both:       failures in an arraycopy stub (a failure pseudo-frame "[AGCT: ..." with an
              arraycopy stub's frame right above it) on at most 0.5 % of them (at least 1
              allowed: a few hundred samples); each stack with a recovered stub frame (VM
              category, subcategory "Recovered stub", not a dispatch stub, adapter or C1
              barrier: their own cases) has
              it right over a Java frame (kernel frames may follow), under Stubs.run; meta.extra
              "Stack recovery" counts as many stub-frame recoveries as the profile has stacks
              with one; each recovered stub frame sits right over the method known to call or
              intrinsify it (delete: the arraycopy under AbstractStringBuilder.shift; no other
              stub recovered): the known-answer oracle of the caller the return address gave;
  delete:     >= 90 % under StringBuilder.delete, >= 80 % with an "arraycopy" stub frame,
              failure pseudo-frames of any kind (the warm-up's interpreter and VM calls) <= 5 %;
  intrinsics: failures in an intrinsic's stub on at most INTRINSIC_FAIL_PCT % of them; each
              recovered intrinsic stub frame right over the JDK class whose method C2
              intrinsified (CRC32, Adler32, sun.security.provider, Base64: the first PcDesc after
              the return address of a non-OSR caller, where the call's node ends, at the return
              address (JDK 17) or after the post-call nop (JDK 25), names the call's scope), at
              least 10 such stacks of 2 stubs; each partial stack (no PcDesc where the
              call ends, 8.5d) the stub's frame over "[inlined frames not known: ...]" over the
              caller nmethod's JDK method (known_caller), over Stubs.run's chain or a named
              root, as many as meta.extra counts; the loop thread's samples rooted at a Java
              failure pseudo-frame and those of <= 2 frames each under 1 % (async-profiler's
              RecoveryTests.intrinsics bounds, docs/VALIDATION.md section 9);
              at most 1 % of the recovered intrinsic stub stacks and WALK_STOP_PCT % of the
              samples on the CPU rooted at NOT_WALKED (the walk below steps over the stub);
  millis:     (System.currentTimeMillis in a loop: os::javaTimeMillis and the vDSO's
              clock_gettime called as a leaf from compiled code, no frame anchor) the known
              answer: in every sample with os::javaTimeMillis, the frame right under the
              native frames is Stubs.millis (or System.currentTimeMillis, a native method
              where it is not intrinsified), unless the native walk stopped there; meta.extra's
              count of stacks "recovered: pc in native code ... called as a leaf" printed
              (rare: ASGCT mostly walks there itself); the walk stopped at "CFA outside the
              stack" right over os::javaTimeMillis (its epilogue after `leave`) on at most
              0.5 % of the loop's samples (at least 1); failure pseudo-frames on at most 25 %
              of the loop's samples (Stubs.millis or os::javaTimeMillis on the stack; 3-5 %
              measured at load 14, 0.2-0.6 % since session 19's red-zone and PLT steps at load
              10-16, 2-3 % where libjvm's unwind table was built, not read from the cache;
              async-profiler's bound is 1 % of all samples after start-up: docs/VALIDATION.md
              section 9);
  subtype:    (C1's slow_subtype_check, docs/VALIDATION.md 8.5g) the known answer: every
              recovered stub frame is right over Stubs.subtypes, the one method whose
              instanceof calls it, and that right over Stubs.subtype; at least 10 such samples;
              meta.extra's count of the case equal to the stacks with one; failures with the
              stub's frame right above them on at most 5 % of the loop's samples; none of
              the recovered stacks with the root "[native: walk stopped (Java frames not
              walked to the call stub)]" (the walk below steps over the stub: native_below.c);
  barrier:    (C1's g1_post_barrier_slow, docs/VALIDATION.md 8.5c) at least 5 samples with a
              recovered stub frame, each right over Stubs.stores, the one method whose stores
              call it; none of them with the root NOT_WALKED (native_below.c steps over it to
              the barrier's continuation); (8.5i) at least 5 of them with G1's card refinement
              (VM code the stub called) above the stub's frame, and failure pseudo-frames on at
              most 25 % of the samples in that code (all of them before the rule, JDK 17);
  clinit:     (a static initializer run by the VM under the resolve_static_call blob,
              docs/VALIDATION.md 8.5h) at least 10 samples in Slow's static initializer; in at
              least 90 % of them the native frames under it (the VM's call back into Java:
              SharedRuntime::resolve_static_call_C, JavaCalls) lie right over Stubs.make, the
              compiled method whose call went through the blob (the walk below crosses the
              blob's frame), and at most 5 % have the root NOT_WALKED (before: all of them;
              with <clinit>'s loop C1-OSR-compiled, its code before the OSR entry, 16-19 %
              until session 22's rule, docs/VALIDATION.md 8.1).
  throws:     (VM code called from Java with the frame anchor set, 8.5i) a preallocated
              exception thrown by Stubs.thrower and caught by Stubs.catcher: every stack
              recovered from the anchor with HotSpot's exception dispatch above it has Java
              frames ending Stubs.throwing, Stubs.catcher[, Stubs.thrower] under Stubs.run (the
              known call path); at least 5 such stacks; "[AGCT: not walkable (Java)]" right
              under VM code on at most 2 % of the loop's samples (9-10 % before the rule).
  mh:         (a method handle intrinsic, frameless, docs/VALIDATION.md 8.5l) at least 10
              samples in MethodHandle.invokeBasic's nmethod; failure pseudo-frames on at most 5 %
              of them (all of them before the rule: 16-18 % of the loop's samples were
              "[AGCT: unknown Java]" under it); each recovered one right over Stubs.mhRound's
              call (the LambdaForm's invokeExact_MT inlined there) under Stubs.mhRound, from the
              thread's start (no walk-stop root); at least 5 samples in linkToStatic's nmethod
              (the shared LambdaForm DirectMethodHandle$Holder.invokeStatic calls it), each right
              over Holder.invokeStatic, none named invokeBasic there (CompiledMethodLoad's name
              for every intrinsic: the names come from the intrinsic id, session 25).
Prints the figures (the share of failure pseudo-frames) either way.
"""
import os
import re
import sys
from collections import Counter

from profile_lib import Profile, run_dir_args

# stubs with recovery rules and cases of their own: the dispatch stubs (it.stack_shape), G1's
# barrier, JDK 17's inline cache stubs (8.5k, it.stack_shape) and JDK 25's nmethod entry barrier
# (the entry case), which a loop's samples meet now and then (1-2 a run under codemap=heap)
OTHER_RULES = {"vtable stub", "itable stub", "g1_post_barrier_slow", "InlineCacheBuffer",
               "method_entry_barrier",
               "DeoptimizationBlob", "UncommonTrapBlob"}  # over the deoptee (VALIDATION 8.5m)
CASE = "recovered: pc in an arraycopy or intrinsic stub (rbp-framed), compiled caller"
# the intrinsic's caller, or the native method itself where it is not intrinsified (interpreter)
CALLERS = {"fxagent.stacks.Stubs.millis", "java.lang.System.currentTimeMillis"}
NANOS = "fxagent.stacks.Stubs.nanos"
NANOS_CALLERS = {NANOS, "fxagent.stacks.Budget.more"}  # System.nanoTime at their bci 0
# not intrinsified (the interpreter, C1): the native method's frame, JVM_NanoTime's if not a
# tail call
NATIVE_NANOS = {"JVM_NanoTime", "java.lang.System.nanoTime"}
LEAF = "recovered: pc in native code compiled code called as a leaf (its caller walked)"
NOT_WALKED = "[native: walk stopped (Java frames not walked to the call stub)]"
NOT_WALKABLE = "[AGCT: not walkable (Java)]"
CFA_STOP = "[native: walk stopped (CFA outside the stack)]"
# A partial stack (docs/VALIDATION.md 8.5d): where the intrinsic's call has no PcDesc where it
# ends, the stub's frame, this pseudo-frame, then the caller nmethod's own method and its callers
PARTIAL = ("recovered (partial): pc in an intrinsic stub, its caller's method, inlined frames not "
           "known (no PcDesc at the call)")
INLINE_GAP = "[inlined frames not known: no PcDesc at the call]"
CALLER_GAP = "[walk stopped: compiled caller's return not proven]"
SUBTYPE = "recovered: pc in C1's slow_subtype_check (frameless, decoded), C1 caller"
# the stub's runtime call (write_ref_field_post_entry, inlined into G1DirtyCardQueueSet::enqueue
# on JDK 17) and G1's refinement under it
REFINE = ("G1BarrierSetRuntime::", "G1DirtyCardQueueSet::", "PtrQueueSet::")

# The known answer (docs/VALIDATION.md 8.5d): on delete the arraycopy stubs' one caller is
# AbstractStringBuilder.shift. The intrinsics' stubs (CRC32, Adler32, MD5/SHA, Base64) are
# recovered only where the caller's nmethod has its first PcDesc after the return address where
# the call's node ends (at it, or after JDK 25's post-call nop: the call's own scope): each must
# sit right over the JDK class whose method C2 intrinsified (the inlined scope of the call), never
# right over Stubs.intrinsics or Stubs.checksum (an outer scope: the first PcDesc after a return
# address without its own, JDK 17, before the check).
INTRINSIC = (("updateBytesCRC32", ("java.util.zip.CRC32.",)),
             ("updateBytesAdler32", ("java.util.zip.Adler32.",)),
             ("implCompress", ("sun.security.provider.",)),
             ("base64", ("java.util.Base64$",)),
             # JDK 17's names of the Base64 stubs (JDK 25: base64_encodeBlock, base64_decodeBlock)
             ("implEncode", ("java.util.Base64$",)), ("implDecode", ("java.util.Base64$",)),
             # C2's fill stubs (session 24): always partial, under the nmethod whose loop C2
             # replaced by the call; on this workload the digests' Arrays.fill (DigestBase,
             # SHA2.implReset), inlined into a sun.security.provider method's nmethod, or
             # Arrays.fill's own nmethod
             ("_fill", ("sun.security.provider.", "java.util.Arrays.fill")))
# failures in an intrinsic's stub on at most this share of the intrinsics loop's samples (JDK 17:
# 43-49 % before the rule, 4-16 % after at load 4-20, up to 29 % with the round inlined into the
# loop's OSR code; out of line, 0.7-10.5 % under 2 busy loops. JDK 25: 55 % before the post-call
# nop's PcDesc was taken, 5.5 % after: sha1_implCompressMB, whose call's run of one scope goes on
# past the nop; 4.95-13.6 % on both in session 20, all such refusals. Since the partial stacks
# (recover_partial.c) no refusal of that kind is left: 0 in 6 runs; without them this fails on
# JDK 25 and on most runs on 17)
INTRINSIC_FAIL_PCT = 2
DEOPT = "[AGCT: deoptimization]"  # agent/model/stacks.c's name for ASGCT's -9
# the stubs thread's samples rooted at NOT_WALKED (session 21): 33-35 % before the walk below
# stepped over an intrinsic's stub, 4.7-5.7 % after (load 12-18): C2 code where the top frame's
# body claim is refused (push/pop bytes, VALIDATION 8.1: DigestBase.engineDigest, its page faults)
WALK_STOP_PCT = 15


def intrinsic(stub):
    return next((c for k, c in INTRINSIC if k.lower() in stub.lower()), None)


def known_caller(case, stub, caller):
    """Whether a Java frame `caller` may be the one right under stub frame `stub`."""
    short = ".".join(caller.split(".")[-2:])
    if "arraycopy" in stub:  # delete's only copy is AbstractStringBuilder.shift's
        return case != "delete" or short == "AbstractStringBuilder.shift"
    classes = intrinsic(stub)
    return case == "intrinsics" and classes is not None and caller.startswith(classes)


def main():
    run, ck = run_dir_args("stub_stacks_check")
    check = ck.check
    for case in ("delete", "intrinsics"):
        p = Profile(os.path.join(run, f"{case}.json.gz"))
        on = [s for s in p.stacks("stubs") if s and p.name[s[-1]] != "[idle]"]
        fail = [s for s in on if any(p.name[f].startswith("[AGCT") for f in s)]
        # a failure in a stub: the failure frame with the stub's (named) frame right above it;
        # the interpreter's codelets (one blob, "Interpreter") are not StubRoutines stubs
        in_stub = [s for s in fail if any(p.name[s[i]].startswith("[AGCT") and i + 1 < len(s)
                                          and p.sub[s[i + 1]] == "Stub"
                                          and ("arraycopy" in p.name[s[i + 1]]
                                               or intrinsic(p.name[s[i + 1]]) is not None)
                                          for i in range(len(s)))]
        # which stub each failure sat in, and the handler's reasons (session 20: a finer
        # reason than one count): for the record beside the figure, not a bound
        by_stub = Counter(p.name[s[i + 1]] for s in in_stub for i in range(len(s) - 1)
                          if p.name[s[i]].startswith("[AGCT") and p.sub[s[i + 1]] == "Stub")
        reasons = {k.split(": ", 1)[1]: v for k, v in (p.extra("Stack recovery") or {}).items()
                   if "intrinsic stub's caller" in k and v}
        print(f"{case}: failures in a stub by stub: {sorted(by_stub.items())}; "
              f"intrinsic refusals by reason (all threads): {sorted(reasons.items())}")
        bound = (max(1, len(on) // 200) if case == "delete" else
                 len(on) * INTRINSIC_FAIL_PCT // 100)
        check(len(on) >= 50 and len(in_stub) <= bound,
              f"{case}: {len(in_stub)} of {len(on)} samples on the CPU "
              f"({100.0 * len(in_stub) / max(1, len(on)):.2f} %) with a failure pseudo-frame in an "
              f"arraycopy or intrinsic stub, at most {bound}; with any failure pseudo-frame: {len(fail)} "
              f"({100.0 * len(fail) / max(1, len(on)):.2f} %)")
        if case == "delete":
            check(len(fail) * 20 <= len(on), "delete: failure pseudo-frames on at most 5 % "
                  "(the warm-up's interpreter and VM calls)")
        stub = [f for f in range(len(p.name)) if p.sub[f] == "Recovered stub"
                and p.name[f] not in OTHER_RULES and not p.name[f].startswith("I2C/C2I")
                and "slow_subtype_check" not in p.name[f]]  # its own case: check_subtype
        partial = [s for s in on if any(p.name[f] == INLINE_GAP for f in s)]
        rec = [s for s in on if any(f in stub for f in s) and s not in partial]
        shape = [s for s in rec if any(s[i] in stub and p.is_js[s[i - 1]] for i in range(1, len(s)))]
        check(len(shape) == len(rec),
              f"{case}: {len(shape)} of {len(rec)} recovered stub stacks have the stub's frame "
              f"right over a Java frame")
        # the known answer holds in the case's own code; the thread's start (Budget's MXBean
        # set-up: an arraycopy under String.getBytes, seen once) copies from anywhere
        workload = [s for s in rec if any(p.name[f] == "fxagent.stacks.Stubs.run" for f in s)]
        check(len(workload) * 10 >= len(rec) * 9,
              f"{case}: {len(workload)} of {len(rec)} recovered stub stacks under Stubs.run "
              "(at least 90 %)")
        wrong = Counter()
        for s in workload:
            for i in range(1, len(s)):
                if s[i] in stub and not known_caller(case, p.name[s[i]], p.name[s[i - 1]]):
                    wrong[(p.name[s[i]], p.name[s[i - 1]])] += 1
        check(not wrong, f"{case}: every recovered stub frame over the method that calls or "
              f"intrinsifies it; wrong: {sorted(wrong.items())}")
        every = sum(1 for s in p.stacks() if any(f in stub for f in s)
                    and not any(p.name[f] == INLINE_GAP for f in s))
        group = p.extra("Stack recovery")
        counted = group.get(CASE, 0) if group else -1  # an entry of 0 is left out
        check(counted == every,
              f"{case}: meta.extra counts {counted} stub-frame recoveries, the profile has {every}")
        if case == "delete":
            under = sum(1 for s in on if any(p.name[f] == "java.lang.StringBuilder.delete" for f in s))
            copy = sum(1 for s in on if any("arraycopy" in p.name[f] for f in s))
            check(under * 10 >= len(on) * 9,
                  f"delete: {under} of {len(on)} samples under StringBuilder.delete (>= 90 %)")
            check(copy * 10 >= len(on) * 8,
                  f"delete: {copy} of {len(on)} samples with an arraycopy stub frame (>= 80 %)")
        else:  # the intrinsics' stubs recovered where the PcDesc proves the scope: 2 kinds at least
            kinds = Counter(k for s in rec for f in s if f in stub
                            for k, _ in INTRINSIC if k.lower() in p.name[f].lower())
            check(len(rec) >= 10 and len(kinds) >= 2,
                  f"intrinsics: {len(rec)} stacks with a recovered intrinsic stub (>= 10), by "
                  f"stub: {sorted(kinds.items())} (>= 2 kinds)")
        if case == "intrinsics":
            check_partial(p, on, partial, stub, check)
            check_walked_below(p, on, rec + partial, check)
            check_c2_decoded(p, check)
    check_millis(run, check)
    check_subtype(run, check)
    check_barrier(run, check)
    check_clinit(run, check)
    check_throws(run, check)
    check_entry(run, check)
    check_mh(run, check)
    return ck.exit_code()


def check_walked_below(p, on, rec, check):
    """The walk below over an intrinsic's stub (native_below.c, session 21): its recovered stacks
    (exact or partial) reach the thread's start, the stub's frame stepped by its rbp frame and
    the return address proven a call to it; before, every one was rooted at NOT_WALKED, 25-35 %
    of the thread's samples on the CPU."""
    cut = [s for s in rec if p.name[s[0]] == NOT_WALKED]
    check(len(cut) * 100 <= len(rec),
          f"intrinsics: {len(cut)} of {len(rec)} recovered intrinsic stub stacks rooted at "
          f"{NOT_WALKED} (at most 1 %)")
    rooted = sum(1 for s in on if p.name[s[0]] == NOT_WALKED)
    check(rooted * 100 <= len(on) * WALK_STOP_PCT,
          f"intrinsics: {rooted} of {len(on)} samples on the CPU "
          f"({100.0 * rooted / max(1, len(on)):.2f} %) rooted at {NOT_WALKED} "
          f"(at most {WALK_STOP_PCT} %)")


def check_partial(p, on, partial, stub, check):
    """intrinsics' partial stacks (8.5d): the stub's frame right over INLINE_GAP, that right
    over the caller nmethod's root method, which must be a JDK method of the intrinsified class
    (known_caller) or of java.security (MessageDigest's delegate calling the digest); under it
    Stubs.run's chain, or CALLER_GAP as the root; meta.extra's count equal to the stacks with
    one. The loop's shares rooted at a Java failure and of <= 2 frames under 1 % (section 9)."""
    wrong, cut = Counter(), 0
    for s in partial:
        i = next(i for i in range(len(s)) if p.name[s[i]] == INLINE_GAP)
        ok = 0 < i < len(s) - 1 and s[i + 1] in stub and p.is_js[s[i - 1]]
        m = p.name[s[i - 1]] if i > 0 else "-"
        ok = ok and (known_caller("intrinsics", p.name[s[i + 1]], m)
                     or m.startswith("java.security.MessageDigest"))
        cut += any(p.name[f] == CALLER_GAP for f in s)
        below = any(p.name[f] == "fxagent.stacks.Stubs.run" for f in s[:i])
        if not ok or not (below or p.name[s[0]] == CALLER_GAP):
            wrong[(p.name[s[i + 1]] if i + 1 < len(s) else "-", m, below)] += 1
    check(not wrong, f"intrinsics: {len(partial)} partial stacks (stub, {INLINE_GAP}, the caller's "
          f"method, its callers to Stubs.run), {cut} of them cut at {CALLER_GAP}; wrong: "
          f"{sorted(wrong.items())}")
    methods = Counter(p.name[s[i - 1]] for s in partial for i in range(1, len(s))
                      if p.name[s[i]] == INLINE_GAP)
    print(f"intrinsics: partial stacks by caller method: {sorted(methods.items())}")
    every = sum(1 for s in p.stacks() if any(p.name[f] == INLINE_GAP for f in s))
    group = p.extra("Stack recovery")
    counted = group.get(PARTIAL, 0) if group else -1
    check(counted == every, f"intrinsics: meta.extra counts {counted} partial stacks, the "
          f"profile has {every}")
    # a Java failure as the root (an ASGCT code, a Java walk stopped); "[native: ..." roots are
    # the native walk below whole Java stacks (issue 32 item 2), not counted. async-profiler's
    # bounds (RecoveryTests.intrinsics: "^\\[unknown" and stacks of <= 2 frames, each < 1 % of
    # all samples after its attach), here of the loop thread's own samples on the CPU from its
    # start, the JIT's warm-up included: its failures left (deoptimizations) fall through the
    # whole run, not before an attach would (docs/VALIDATION.md section 9, "Recovery intrinsics").
    # Stricter than its "^\\[unknown" but for one class it does not count either: a deoptimized
    # frame (its "[deoptimization]", our DEOPT), which no walk can recover (8.5d)
    failed = [s and p.name[s[0]].startswith(("[AGCT", "[walk stopped")) and p.name[s[0]] != DEOPT
              for s in on]
    rooted = [s for s, f in zip(on, failed) if f]
    short = [s for s in on if len(s) <= 2]
    roots = Counter(" ; ".join(p.name[f] for f in s[:2])
                    for s, f in zip(on, failed) if f or len(s) <= 2)
    check(len(rooted) * 100 < len(on) and len(short) * 100 < len(on),
          f"intrinsics: of {len(on)} loop samples, rooted at a Java failure pseudo-frame "
          f"{len(rooted)} ({100.0 * len(rooted) / max(1, len(on)):.2f} %; {DEOPT} apart: "
          f"{sum(1 for s in on if s and p.name[s[0]] == DEOPT)}), <= 2 frames "
          f"{len(short)} ({100.0 * len(short) / max(1, len(on)):.2f} %), each < 1 %; partial "
          f"{len(partial)} ({100.0 * len(partial) / max(1, len(on)):.2f} %); by root: "
          f"{sorted(roots.items())}")


def check_subtype(run, check):
    """The subtype case: C1's frameless slow_subtype_check stub (docstring)."""
    p = Profile(os.path.join(run, "subtype.json.gz"))
    on = [s for s in p.stacks("stubs") if any(p.name[f] == "fxagent.stacks.Stubs.subtype"
                                              for f in s)]
    stub = {f for f in range(len(p.name)) if "slow_subtype_check" in p.name[f]}
    # the stub's frame and where it is (kernel frames may follow it)
    rec = [(s, i) for s in on for i in range(2, len(s))
           if s[i] in stub and p.sub[s[i]] == "Recovered stub"]
    right = [s for s, i in rec if p.name[s[i - 1]] == "fxagent.stacks.Stubs.subtypes"
             and p.name[s[i - 2]] == "fxagent.stacks.Stubs.subtype"]
    fail = [s for s in on if any(p.name[s[i]].startswith("[AGCT") and s[i + 1] in stub
                                 for i in range(len(s) - 1))]
    check(len(rec) >= 10 and len(right) == len(rec),
          f"subtype: {len(rec)} of {len(on)} samples in the loop with a recovered "
          f"slow_subtype_check frame (at least 10), {len(right)} of them right over "
          "Stubs.subtypes under Stubs.subtype (all required)")
    every = sum(1 for s in p.stacks() if any(f in stub and p.sub[f] == "Recovered stub"
                                             for f in s))
    counted = (p.extra("Stack recovery") or {}).get(SUBTYPE, 0)
    check(counted == every, f"subtype: meta.extra counts {counted} recoveries in the stub, the "
          f"profile has {every}")
    cut = [s for s, _ in rec if p.name[s[0]] == NOT_WALKED]
    check(not cut, f"subtype: {len(cut)} of {len(rec)} recovered stacks cut below: {NOT_WALKED}")
    check(len(fail) * 20 <= len(on), f"subtype: {len(fail)} of {len(on)} samples in the loop "
          f"({100.0 * len(fail) / max(1, len(on)):.2f} %) fail in the stub, at most 5 %")


def check_barrier(run, check):
    """The barrier case: C1's g1_post_barrier_slow stub (docstring)."""
    p = Profile(os.path.join(run, "barrier.json.gz"))
    rec = [(s, i) for s in p.stacks("stubs") for i in range(1, len(s))
           if p.name[s[i]] == "g1_post_barrier_slow" and p.sub[s[i]] == "Recovered stub"]
    right = [s for s, i in rec if p.name[s[i - 1]] == "fxagent.stacks.Stubs.stores"]
    cut = [s for s, _ in rec if p.name[s[0]] == NOT_WALKED]
    check(len(rec) >= 5 and len(right) == len(rec),
          f"barrier: {len(rec)} samples with a recovered g1_post_barrier_slow frame (at least "
          f"5), {len(right)} of them right over Stubs.stores (all required)")
    check(not cut, f"barrier: {len(cut)} of {len(rec)} recovered stacks cut below: {NOT_WALKED}")
    # 8.5i: the pc in G1's refinement, the VM code the stub called (its frames above the stub)
    vm = [s for s in p.stacks("stubs") if any(p.name[f].startswith(REFINE) for f in s)]
    over = [s for s, i in rec if i + 1 < len(s) and not p.is_js[s[i + 1]]]
    fail = [s for s in vm if any(p.name[f].startswith("[AGCT") for f in s)]
    check(len(over) >= 5, f"barrier: {len(over)} recovered stacks with VM code above the stub "
          "(G1's refinement; at least 5)")
    # 100 % before the rule; after it 2.6 % and 17 % (6 of 35) in two JDK 17 runs: some native
    # walks do not end right after the stub's call (the leaf rule refuses them, 8.5e)
    check(len(vm) >= 5 and len(fail) * 4 <= len(vm),
          f"barrier: {len(fail)} of {len(vm)} samples in G1's refinement "
          f"({100.0 * len(fail) / max(1, len(vm)):.2f} %) with a failure pseudo-frame, at most "
          "25 % (at least 5 such samples)")


def check_throws(run, check):
    """The throws case: VM code called from Java with the frame anchor set (docstring)."""
    p = Profile(os.path.join(run, "throws.json.gz"))
    on = [s for s in p.stacks("stubs") if any(p.name[f] == "fxagent.stacks.Stubs.throwing"
                                              for f in s) or any(p.name[f].startswith("[AGCT")
                                                                  for f in s)]
    fail = [s for s in on if any(p.name[f].startswith("[AGCT") for f in s)]
    # recovered from the anchor: the Java frames "Recovered", HotSpot's exception dispatch (VM
    # code: rethrow_C, raw_exception_handler_for_return_address, handle_exception_C, ...) above;
    # by those names, not any "exception" (MethodCounters::allocate_with_exception under the
    # loop's Budget.more is VM code on another path: one run failed on it under load)
    dispatch = re.compile(r"rethrow|handle_exception|exception_handler")
    rec = [s for s in on if any(p.sub[f] == "Recovered" for f in s) and not p.is_js[s[-1]]
           and any(not p.is_js[f] and dispatch.search(p.name[f]) for f in s)]
    wrong = Counter()
    for s in rec:
        java = [p.name[f].rsplit(".", 1)[-1] for f in s if p.is_js[f]]
        k = 3 if java[-1] == "thrower" else 2
        if java[-k:] not in (["throwing", "catcher"], ["throwing", "catcher", "thrower"]) or \
                "fxagent.stacks.Stubs.run" not in [p.name[f] for f in s]:
            wrong[";".join(java[-4:])] += 1
    check(len(rec) >= 5 and not wrong,
          f"throws: {len(rec)} stacks recovered with VM code on top (at least 5), not on the "
          f"known path Stubs.run..throwing;catcher[;thrower]: {sorted(wrong.items())}")
    # AsyncGetCallTrace's -6 with HotSpot's exception dispatch (VM code) right above it: 9-10 %
    # of the loop's samples before the rule (rethrow_C, raw_exception_handler_for_return_address)
    vm = [s for s in fail if any(p.name[s[i]] == NOT_WALKABLE and not p.is_js[s[i + 1]]
                                 for i in range(len(s) - 1))]
    check(len(vm) * 50 <= len(on),
          f"throws: {len(vm)} of {len(on)} samples in the loop "
          f"({100.0 * len(vm) / max(1, len(on)):.2f} %) with {NOT_WALKABLE} under VM code, at "
          f"most 2 %; any failure pseudo-frame: {len(fail)} "
          f"({100.0 * len(fail) / max(1, len(on)):.2f} %: the rethrow stub's own pcs, the walk "
          "below's stops)")


def check_clinit(run, check):
    """The clinit case: Java called back by the VM under a runtime stub's frame (docstring)."""
    p = Profile(os.path.join(run, "clinit.json.gz"))
    init = [s for s in p.stacks("stubs") if any(p.name[f].endswith("Slow.<clinit>") for f in s)]
    right = 0
    for s in init:
        i = next(k for k, f in enumerate(s) if p.name[f].endswith("Slow.<clinit>"))
        j = i - 1
        while j >= 0 and not p.is_js[s[j]]:
            j -= 1
        vm = [p.name[f] for f in s[j + 1:i]]
        if j >= 0 and p.name[s[j]] == "fxagent.stacks.Stubs.make" and any(
                n.startswith("SharedRuntime::resolve_static_call") for n in vm):
            right += 1
    cut = sum(1 for s in init if p.name[s[0]] == NOT_WALKED)
    check(len(init) >= 10 and right * 10 >= len(init) * 9,
          f"clinit: {right} of {len(init)} samples in Slow.<clinit> (at least 10) with the VM's "
          "frames (SharedRuntime::resolve_static_call_C among them) right over Stubs.make (at "
          "least 90 %)")
    check(cut * 20 <= len(init), f"clinit: {cut} of {len(init)} samples in Slow.<clinit> cut "
          f"below: {NOT_WALKED} (at most 5 %)")


STUBS = "fxagent.stacks.Stubs."
# the callers the workload's own methods have: a dropped or wrong frame under them shows here
CALLER_OF = {STUBS + "entered": STUBS + "entry"}


def check_entry(run, check):
    """The entry case (JDK 25): the nmethod entry barrier's leaf call into the VM (8.5j)."""
    path = os.path.join(run, "entry.json.gz")
    if not os.path.exists(path):
        return  # JDK 17: no such stub under G1, the case is not run
    p = Profile(path)
    vm = [s for s in p.stacks("stubs")
          if any(p.name[f].startswith("BarrierSetNMethod::nmethod_stub_entry_barrier") for f in s)]
    fail = [s for s in vm if any(p.name[f].startswith(("[AGCT", "[native: walk stopped"))
                                 for f in s)]
    check(len(vm) >= 5 and len(fail) * 4 <= len(vm),
          f"entry: {len(fail)} of {len(vm)} samples in nmethod_stub_entry_barrier (at least 5) "
          "with a failure pseudo-frame, at most 25 %")
    wrong, right = Counter(), 0
    for s in vm:
        at = [i for i, f in enumerate(s) if p.name[f] == "method_entry_barrier"]
        if not at:
            continue  # failed: counted above
        i = at[0]
        shape = tuple(p.name[s[j]] for j in (i - 2, i - 1) if j >= 0)
        callee = shape[-1] if shape else ""
        if s in fail:
            continue  # the stub named over a failure (ASGCT refused its caller): counted above
        own = re.fullmatch(re.escape(STUBS) + r"ent\d+", callee) is not None
        want = STUBS + "entered" if own else CALLER_OF.get(callee)
        if len(shape) < 2 or callee.startswith("[") or shape[0].startswith("["):
            wrong[";".join(shape)] += 1  # the entered method must be a Java frame with a caller
        elif want is not None and shape[0] != want:
            wrong[";".join(shape)] += 1
        elif own:
            right += 1
        # else: another compiled method the thread enters (String.hashCode under Stubs.entN,
        # the JDK's own code): its caller is not known here
    check(right >= 5 and not wrong, f"entry: {right} stacks (at least 5) with "
          "method_entry_barrier right over Stubs.entN right over Stubs.entered, Stubs.entered "
          "always over Stubs.entry, every entered method a Java frame over a Java caller; "
          f"wrong: {sorted(wrong.items())}")


def check_mh(run, check):
    """The mh case: MethodHandle.invokeBasic's frameless nmethod (8.5l)."""
    p = Profile(os.path.join(run, "mh.json.gz"))
    basic = "java.lang.invoke.MethodHandle.invokeBasic"
    on = [s for s in p.stacks("stubs") if s and p.name[s[-1]] == basic]
    fail = [s for s in on if any(p.name[f].startswith(("[AGCT", "[native: walk stopped",
                                                        "[walk stopped")) for f in s)]
    check(len(on) >= 10 and len(fail) * 20 <= len(on),
          f"mh: {len(fail)} of {len(on)} samples in MethodHandle.invokeBasic (at least 10) with a "
          "failure pseudo-frame, at most 5 %")
    wrong, right = Counter(), 0
    for s in on:
        if s in fail:
            continue
        names = [p.name[f] for f in s]
        # ...;Stubs.mhRound;LambdaForm$MH.invokeExact_MT (inlined);MethodHandle.invokeBasic
        at = [i for i, n in enumerate(names) if n == STUBS + "mhRound"]
        if at and all(n.startswith("java.lang.invoke.") for n in names[at[-1] + 1:]) and \
                names[at[-1] - 1] == STUBS + "mh":
            right += 1
        else:
            wrong[";".join(names[-4:])] += 1
    check(right >= 10 and not wrong, f"mh: {right} stacks (at least 10) with invokeBasic over "
          f"Stubs.mhRound over Stubs.mh; wrong: {sorted(wrong.items())[:5]}")
    holder = "java.lang.invoke.DirectMethodHandle$Holder.invokeStatic"
    link = [s for s in p.stacks("stubs")
            if len(s) > 1 and p.name[s[-1]] == "java.lang.invoke.MethodHandle.linkToStatic"]
    over = sum(1 for s in link if p.name[s[-2]] == holder)
    misnamed = sum(1 for s in on if len(s) > 1 and p.name[s[-2]] == holder)
    check(over >= 5 and over == len(link) and misnamed == 0,
          f"mh: {over} of {len(link)} samples in MethodHandle.linkToStatic right over "
          f"Holder.invokeStatic (at least 5, all); {misnamed} named invokeBasic there (none)")


def check_millis(run, check):
    """The millis case: native code called as a leaf from compiled code (docstring)."""
    p = Profile(os.path.join(run, "millis.json.gz"))
    loop = ("fxagent.stacks.Stubs.millis", "os::javaTimeMillis")
    on = [s for s in p.stacks("stubs") if any(p.name[f].startswith(loop) for f in s)]
    fail = [s for s in on if any(p.name[f].startswith(("[AGCT", "[native: walk stopped"))
                                 for f in s)]
    # 3-5 % at load 14 on 2 CPUs (0.2-0.6 % at load 10-16 since the red-zone and PLT steps,
    # session 19; 2-3 % where libjvm's table was built, not read from the cache); at load 24,
    # 17 %: libjvm's unwind table (seconds to build there) not yet built for the first second's
    # walks. Before the leaf rule: 87-97 %.
    check(len(on) >= 30 and len(fail) * 4 <= len(on),
          f"millis: {len(fail)} of {len(on)} samples in the loop (Stubs.millis or "
          f"os::javaTimeMillis on the stack; {100.0 * len(fail) / max(1, len(on)):.2f} %) with a "
          "failure pseudo-frame, at most 25 %")
    # a leaf interrupted after os::javaTimeMillis' `leave` (rbp saved in its red zone, fx_cfi.h):
    # 0.6-3.0 % of the loop's samples stopped so before the rule, none in 6 runs after
    cfa = sum(1 for s in on if any(p.name[s[i]] == CFA_STOP and
                                   p.name[s[i + 1]].startswith("os::javaTimeMillis")
                                   for i in range(len(s) - 1)))
    check(cfa <= max(1, len(on) // 200),
          f"millis: {cfa} samples stopped at 'CFA outside the stack' in os::javaTimeMillis, "
          f"at most {max(1, len(on) // 200)}")
    wrong, right = Counter(), 0
    for s in on:
        at = [i for i, f in enumerate(s) if p.name[f].startswith("os::javaTimeMillis")]
        if not at:
            continue
        under = s[at[0] - 1] if at[0] > 0 else None
        if under is not None and p.name[under].startswith(("[native: walk stopped", "[AGCT")):
            continue  # the walk stopped or failed there: a failure (counted above), not a caller
        if under is not None and p.name[under] in CALLERS:
            right += 1
        else:
            wrong[p.name[under] if under is not None else "(root)"] += 1
    check(right > 0 and not wrong, f"millis: {right} samples with os::javaTimeMillis right over "
          f"Stubs.millis; over anything else: {sorted(wrong.items())}")
    counted = (p.extra("Stack recovery") or {}).get(LEAF, 0)  # rare: ASGCT mostly walks there
    print(f"millis: {counted} stacks recovered from native code called as a leaf")
    check_nanos(p, check)


def check_c2_decoded(p, check):
    """C2's instruction before pc decoded (docs/VALIDATION.md 8.1, recover.c c2_push_before):
    DigestBase.engineDigest's nmethod zeroes a new array with MacroAssembler's clear_mem loop
    (`dec rcx; js rel8; mov [rdi+rcx*8], rax`), whose page faults put samples on the store,
    after the js displacement 0x56 / 0x57, a push's byte (session 21: 38 of 40 such walk-below
    stops at one pc). The walks below from C2 frames after such a byte, by meta.extra "Native
    stacks": at least 5 must reach the thread's first frame and at most a quarter of that be
    refused or stopped. Without the decode every one is refused (session 24: 31 and 25
    refused, 0 reached, JDK 17 and 25; with it 35 and 41 reached, none refused or stopped)."""
    g = p.extra("Native stacks") or {}
    top = "walks below from a C2 frame after a byte 0x50-0x57"
    root = g.get(f"{top}, decoded as no push: to the thread's first frame", 0)
    cut = g.get(f"{top}, decoded as no push: stopped", 0)
    refused = g.get(f"{top}: its frame refused", 0)
    check(root >= 5 and (cut + refused) * 4 <= root,
          f"intrinsics: {root} walks below from a C2 frame after a byte 0x50-0x57 (decoded as "
          f"no push) reached the thread's first frame (>= 5), {cut} stopped and {refused} "
          f"refused (at most a quarter of that)")


def check_nanos(p, check):
    """System.nanoTime at bci 0 of Stubs.nanos, inlined into the millis loop: the leaf call's
    caller frame comes back at bci 0, which 8.5a refused until session 24 (every such sample
    `[AGCT: unknown Java];os::javaTimeNanos`); kept now where the method is not the caller
    nmethod's own (AsyncGetCallTrace's no-PcDesc fallback, a deoptimized caller's, names that
    one at bci 0). Its known answer: os::javaTimeNanos right over Stubs.nanos right over
    Stubs.millis (Budget.more's own first call, inlined there too: over Stubs.millis), or over
    the native method's own frames (System.nanoTime, JVM_NanoTime) where not intrinsified;
    never Stubs.millis (the fallback's frame) right under it."""
    wrong, right, failed, total = Counter(), 0, 0, 0
    for s in p.stacks("stubs"):  # a failed one has no Stubs.millis frame
        at = [i for i, f in enumerate(s) if p.name[f].startswith("os::javaTimeNanos")]
        if not at:
            continue
        total += 1
        i = at[0]
        under = p.name[s[i - 1]] if i > 0 else "(root)"
        below = p.name[s[i - 2]] if i > 1 else "(root)"
        if under.startswith(("[native: walk stopped", "[AGCT")):
            failed += 1
        elif under in NATIVE_NANOS or (under in NANOS_CALLERS and below in CALLERS):
            right += 1
        else:
            wrong[f"{under} under {below}"] += 1
    check(total >= 10 and failed * 4 <= total and right > 0 and not wrong,
          f"nanos: {total} samples in os::javaTimeNanos, {failed} with a failure right under "
          f"it (at most 25 %), {right} right over {NANOS} over Stubs.millis (or the native method); "
          f"over anything else: {sorted(wrong.items())}")


if __name__ == "__main__":
    sys.exit(main())
