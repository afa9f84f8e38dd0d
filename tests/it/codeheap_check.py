#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The code heap lookup's figures in a profile (issue 32, agent/sampling/codeheap_sig.c), for
it.validate_recovered's run with FXAGENT_TEST_CODEHEAP_ONLY=1 (no compiled method in the code
table). Fails unless meta.extra's "Stack recovery" group says the walks found pcs in the code
heaps (at least --min-found), the lookup agreed with CompiledMethodLoad at least --min-agree
times and differed from it never, and the walks' lookups (a sample reuses the nmethod it found
last: a lookup for each pc found, none for a reuse) at least the pcs found. A detail the agent
leaves out is 0.
Issue 31: with --min-scopes-agree N (the run under FXAGENT_TEST_NMETHOD_SCOPES=1, every load
checked), the inlining facts decoded from each nmethod's own PcDescs and scopes
(agent/sampling/nmethod_scopes.c) agreed with the CompiledMethodLoad records at least N times,
differed never, and more often agreed than were refused.
usage: codeheap_check.py PROFILE [--label L] [--min-found N] [--min-agree N] [--min-scopes-agree N]
"""
import argparse

from profile_lib import Checker, extra_groups, load_profile

FOUND = "pcs found in the code heaps (compiled since the table)"
AGREE = "code heap lookups agreeing with CompiledMethodLoad"
REFUSED = "code heap lookups refused (not proven) at CompiledMethodLoad"
DIFFER = "code heap lookups differing from CompiledMethodLoad"
HANDLER = "handler: recovered in a method found in the code heaps"
LOOKUPS = "code heap lookups by the handler's walks (~8 system calls each)"
BUDGET = "code heap lookups refused past a sample's budget (24)"
S_AGREE = "nmethod scopes agreeing with CompiledMethodLoad"
S_REFUSED = "nmethod scopes refused (not read) at CompiledMethodLoad"
S_DIFFER = "nmethod scopes differing from CompiledMethodLoad"
NOT_READ = "nmethod scopes not read: "
NO_SCOPE = "no PcDesc with a scope"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--label", default="codeheap")
    ap.add_argument("--min-found", type=int, default=20)
    ap.add_argument("--min-agree", type=int, default=50)
    ap.add_argument("--min-scopes-agree", type=int, default=0)
    a = ap.parse_args()
    ck = Checker(a.label)
    group = extra_groups(load_profile(a.profile)).get("Stack recovery")
    if group is None:
        ck.fatal(f"{a.profile}: no 'Stack recovery' group in meta.extra")
    v = {k: group.get(k, 0) for k in (FOUND, AGREE, REFUSED, DIFFER, HANDLER, LOOKUPS, BUDGET,
                                      S_AGREE, S_REFUSED, S_DIFFER)}
    print(f"{a.label}: code heaps: {v[FOUND]} pcs found by the walks, {v[HANDLER]} samples "
          f"recovered in such a method; at CompiledMethodLoad {v[AGREE]} lookups agreed, "
          f"{v[REFUSED]} refused, {v[DIFFER]} differed; {v[LOOKUPS]} lookups by the walks, "
          f"{v[BUDGET]} refused past a sample's budget")
    ck.check(v[LOOKUPS] >= v[FOUND], f"{v[LOOKUPS]} lookups by the walks, fewer than the "
             f"{v[FOUND]} pcs they found")
    ck.check(v[FOUND] >= a.min_found, f"{v[FOUND]} pcs found in the code heaps, expected at "
             f"least {a.min_found}")
    ck.check(v[AGREE] >= a.min_agree, f"{v[AGREE]} lookups agreed with CompiledMethodLoad, "
             f"expected at least {a.min_agree}")
    ck.check(v[DIFFER] == 0, f"{v[DIFFER]} lookups differed from CompiledMethodLoad")
    if a.min_scopes_agree > 0:
        print(f"{a.label}: nmethod scopes at CompiledMethodLoad: {v[S_AGREE]} agreed, "
              f"{v[S_REFUSED]} refused, {v[S_DIFFER]} differed")
        ck.check(v[S_AGREE] >= a.min_scopes_agree, f"{v[S_AGREE]} nmethod scopes agreed with "
                 f"CompiledMethodLoad, expected at least {a.min_scopes_agree}")
        # refused at a load: an nmethod with no PcDesc holding a scope (native wrappers, method
        # handle intrinsics: tier 0, whose event has no records either; their number follows the
        # program, 40-70 on BigAlloc) is expected; any other reason not to read must stay rare
        other = {k[len(NOT_READ):]: n for k, n in group.items()
                 if k.startswith(NOT_READ) and k != NOT_READ + NO_SCOPE and n}
        ck.check(sum(other.values()) < v[S_AGREE], f"nmethod scopes not read for reasons other "
                 f"than '{NO_SCOPE}': {other}, not fewer than the {v[S_AGREE]} agreeing")
        ck.check(v[S_DIFFER] == 0, f"{v[S_DIFFER]} nmethod scopes differed from "
                 "CompiledMethodLoad")
    return ck.exit_code()


if __name__ == "__main__":
    raise SystemExit(main())
