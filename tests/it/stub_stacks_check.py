#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the profiles of stub_stacks_test.sh (issue 32 item 4: samples in StubRoutines stubs).

usage: stub_stacks_check.py --label NAME RUN_DIR   (reads delete.json.gz, intrinsics.json.gz)
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
  intrinsics: the intrinsics' stubs not recovered: at least one failure named by its stub.
Prints the figures (the share of failure pseudo-frames) either way.
"""
import os
import sys
from collections import Counter

from profile_lib import Profile, run_dir_args

OTHER_RULES = {"vtable stub", "itable stub", "g1_post_barrier_slow"}  # their own recovery cases
CASE = "recovered: pc in an arraycopy stub (rbp-framed), compiled caller"

# The known answer (docs/VALIDATION.md 8.5d): the rule recovers arraycopy stubs only; on
# delete their one caller is AbstractStringBuilder.shift. The intrinsics' stubs (CRC32,
# Adler32, MD5/SHA, Base64) were tried and left out: there the first PcDesc after the return
# address was not always the call's scope (updateBytesAdler32 right over Stubs.intrinsics, the
# inlined Stubs.checksum and Adler32.update missing, JDK 17), so their samples stay named failures.


def known_caller(case, stub, caller):
    """Whether a Java frame `caller` may be the one right under stub frame `stub`."""
    short = ".".join(caller.split(".")[-2:])
    if "arraycopy" in stub:  # delete's only copy is AbstractStringBuilder.shift's
        return case != "delete" or short == "AbstractStringBuilder.shift"
    return False  # the rule is the arraycopy stubs' only (the intrinsics' stubs stay failures)


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
                                          and "arraycopy" in p.name[s[i + 1]] for i in range(len(s)))]
        bound = max(1, len(on) // 200)
        check(len(on) >= 50 and len(in_stub) <= bound,
              f"{case}: {len(in_stub)} of {len(on)} samples on the CPU "
              f"({100.0 * len(in_stub) / max(1, len(on)):.2f} %) with a failure pseudo-frame in an "
              f"arraycopy stub, at most {bound}; with any failure pseudo-frame: {len(fail)} "
              f"({100.0 * len(fail) / max(1, len(on)):.2f} %)")
        if case == "delete":
            check(len(fail) * 20 <= len(on), "delete: failure pseudo-frames on at most 5 % "
                  "(the warm-up's interpreter and VM calls)")
        stub = [f for f in range(len(p.name)) if p.sub[f] == "Recovered stub"
                and p.name[f] not in OTHER_RULES and not p.name[f].startswith("I2C/C2I")]
        rec = [s for s in on if any(f in stub for f in s)]
        shape = [s for s in rec if any(s[i] in stub and p.is_js[s[i - 1]] for i in range(1, len(s)))
                 and any(p.name[f] == "fxagent.stacks.Stubs.run" for f in s)]
        check(len(shape) == len(rec),
              f"{case}: {len(shape)} of {len(rec)} recovered stub stacks have the stub's frame "
              f"right over a Java frame, under Stubs.run")
        wrong = Counter()
        for s in rec:
            for i in range(1, len(s)):
                if s[i] in stub and not known_caller(case, p.name[s[i]], p.name[s[i - 1]]):
                    wrong[(p.name[s[i]], p.name[s[i - 1]])] += 1
        check(not wrong, f"{case}: every recovered stub frame over the method that calls or "
              f"intrinsifies it; wrong: {sorted(wrong.items())}")
        every = sum(1 for s in p.stacks() if any(f in stub for f in s))
        counted = (p.extra("Stack recovery") or {}).get(CASE, -1)
        check(counted == every,
              f"{case}: meta.extra counts {counted} stub-frame recoveries, the profile has {every}")
        if case == "delete":
            under = sum(1 for s in on if any(p.name[f] == "java.lang.StringBuilder.delete" for f in s))
            copy = sum(1 for s in on if any("arraycopy" in p.name[f] for f in s))
            check(under * 10 >= len(on) * 9,
                  f"delete: {under} of {len(on)} samples under StringBuilder.delete (>= 90 %)")
            check(copy * 10 >= len(on) * 8,
                  f"delete: {copy} of {len(on)} samples with an arraycopy stub frame (>= 80 %)")
        else:  # the intrinsics' stubs stay named failures: the rule is off for them
            named = sum(1 for s in fail if any(p.sub[f] == "Stub" and p.name[f] != "Interpreter"
                                               for f in s))
            check(named >= 1, f"intrinsics: {named} failures named by their (intrinsic) stub")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
