#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The known answer of the interpreter's method entry rule (issue 32, docs/VALIDATION.md 8.5f)
on a profile of java-test/stacks' fxagent.stacks.Interp under -Xint, thread "interp".

  interp_entry_check.py --profile P.json.gz [--label L] [--thread interp]

For every sample of the thread whose leaf is a recovered Java frame (subcategory "Recovered...",
the entered method, no line; kernel frames above it set aside): the path under it, as (function, line) from the bottom Java frame,
followed by the entered method's function, must be a prefix of an ordinary sample's path (no
recovered or failure frame): that call site, under the same callers, seen with that method
running above it. At least MIN_RECOVERED such samples; meta.extra's count of the rule at least
the samples that show it (the thread is not the only one that may enter methods); failure
pseudo-frames right under "Interpreter" (the rule's leftovers) on at most MAX_INTERP_FAIL_PCT of
the thread's samples. Exit status: the number of failed checks."""
import argparse
import sys
from collections import Counter

from profile_lib import Checker, Profile
from stack_shape_check import FAILURE_PREFIX, extra_int, is_recovered, path_key, samples

LABEL = "recovered: pc in the interpreter's method entry (frame being built)"
MIN_RECOVERED = 3
MAX_INTERP_FAIL_PCT = 2.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", required=True)
    ap.add_argument("--thread", default="interp")
    ap.add_argument("--label", default="interp_entry")
    a = ap.parse_args()
    prof = Profile(a.profile)
    ck = Checker(a.label)
    threads = [t for t in prof.doc["threads"] if t.get("name") == a.thread]
    if len(threads) != 1:
        ck.fail(f"{len(threads)} threads named {a.thread!r}")
        return ck.exit_code()
    seen = set()  # (call site path, callee function) of ordinary samples
    recovered, total, interp_fail = [], 0, 0
    for path, w in samples(prof, threads[0]):
        total += w
        names = [prof.name[f] for f in path]
        if any(n.startswith(FAILURE_PREFIX) for n in names):
            if "Interpreter" in names:
                interp_fail += w
            continue
        while path and not prof.is_js[path[0]]:  # native frames below the Java ones
            path = path[1:]
        while path and not prof.is_js[path[-1]]:  # kernel frames above (the signal in a syscall)
            path = path[:-1]
        if not path:
            continue
        if is_recovered(prof, path[-1]):
            recovered.append((path, w))
            continue
        if any(is_recovered(prof, f) for f in path):
            recovered.append((path, w))  # a recovered frame under an ordinary one: refused below
            continue
        key = path_key(prof, path)
        for k in range(1, len(key)):
            seen.add((key[:k], key[k][0]))
    matched, bad, callees = 0, Counter(), Counter()
    for path, w in recovered:
        leaf = prof.name[path[-1]]
        site = path_key(prof, path[:-1])
        if any(is_recovered(prof, f) for f in path[:-1]) or not site or (site, leaf) not in seen:
            where = f"{site[-1][0]}:{site[-1][1]}" if site else "(nothing under it)"
            bad[f"{leaf} on {where}"] += w
        else:
            matched += w
            callees[leaf] += w
    n = sum(w for _, w in recovered)
    counter = extra_int(prof.doc, LABEL)
    fail_pct = 100.0 * interp_fail / total if total else 0.0
    print(f"{a.label}: thread {a.thread}: {total:g} samples, {n:g} recovered ({matched:g} at an "
          f"ordinary call site with that callee), entered methods {dict(callees)}, counter "
          f"{counter}, failures over Interpreter {fail_pct:.2f} %")
    for what, w in bad.most_common():
        print(f"{a.label}:   mismatch: {w:g} x {what}")
    ck.check(not bad, f"{sum(bad.values()):g} recovered stacks at no ordinary call site of "
             "their entered method (listed above)")
    ck.check(n >= MIN_RECOVERED, f"{n:g} recovered samples, need >= {MIN_RECOVERED}")
    ck.check(counter is not None and counter >= len(recovered),
             f"meta.extra {LABEL!r} = {counter}, below the {len(recovered)} samples that show it")
    ck.check(fail_pct <= MAX_INTERP_FAIL_PCT, f"{fail_pct:.2f} % of the samples fail over "
             f"Interpreter, at most {MAX_INTERP_FAIL_PCT:g} % allowed")
    print(f"{a.label}: {'OK' if not ck.failures else f'{len(ck.failures)} check(s) failed'}")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
