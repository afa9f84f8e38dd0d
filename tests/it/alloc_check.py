#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks an alloc= profile of java-test/alloc's AllocWorkload (tests/it/alloc_test.sh).

  split: every thread's nativeAllocations table has the balanced shape of the front-end's
         RawBalancedNativeAllocationsTable; the estimated bytes of smallSite/mediumSite/
         largeSite (allocations whose stack holds the method) split as the workload's measured
         truth within --tol-pp percentage points, and their sum is within --tol-total of the
         bytes the thread allocated; the leaf frame of each allocation is its class in the
         Allocation category.
  live:  every free pairs an earlier allocation of the same table (same address, same stack,
         negated weight); the retained bytes (allocations without a free) hold heldSite and
         almost no droppedSite.
  share: issue 30's known live set: heldSite (the allocating method, the frame under the
         class leaf) holds at least --min-share % of the retained bytes; with --summary
         (fxprof summary --json of the same file), summary's allocated and retained bytes and
         its top retaining method's bytes are the file's own."""
import argparse
import json
import sys

from profile_lib import Checker, Profile, extra_groups, load_profile

CK = Checker()
COLS = ("time", "weight", "weightType", "stack", "memoryAddress", "threadId", "length")


def stack_funcs(p, st):
    """(function name, category name) of each frame of a stack, leaf first."""
    return [(p.name[f], p.cat[f]) for f in reversed(p.path(st))]


def tables(d):
    for t in d["threads"]:
        na = t.get("nativeAllocations")
        if na is None:
            continue
        bad = [c for c in COLS if c not in na]
        if bad or na["weightType"] != "bytes":
            CK.fatal(f"thread {t['name']}: nativeAllocations lacks {bad} or weightType")
        n = na["length"]
        for c in ("time", "weight", "stack", "memoryAddress", "threadId"):
            if len(na[c]) != n:
                CK.fatal(f"thread {t['name']}: column {c} has {len(na[c])} rows, not {n}")
        if any(tid != t["tid"] for tid in na["threadId"]):
            CK.fatal(f"thread {t['name']}: threadId is not the thread's tid")
        if any(b < a for a, b in zip(na["time"], na["time"][1:])):
            CK.fatal(f"thread {t['name']}: times decrease")
        yield t, na


def site_of(funcs, sites):
    for name, _ in funcs:
        for s in sites:
            if name.endswith("AllocWorkload." + s):
                return s
    return None


def check_counter(d):
    """The "Allocated (sampled)" counter starts at 0, and the sum of its counts after the first
    (what the front-end shows as "range in graph" for the whole profile: it leaves the first
    sample out) is the bytes of the allocation rows (what the call tree shows)."""
    cs = [c for c in d.get("counters", []) if c["name"] == "Allocated (sampled)"]
    if len(cs) != 1:
        CK.fatal(f"{len(cs)} 'Allocated (sampled)' counters")
    count = cs[0]["samples"]["count"]
    rows = sum(w for _, na in tables(d) for w in na["weight"] if w > 0)
    in_range = sum(count[1:])
    print(f"counter: first {count[0]}, range in graph {in_range}, allocation rows {rows}")
    if count[0] != 0 or in_range != rows:
        CK.fail("the counter's range in graph is not the allocated bytes of the rows")


def check_price(d):
    """meta.extra prices the view: 1 callback in 64 is timed in the allocating thread's CPU time
    (from the 64th: no figure below 64 samples), so the count timed is samples // 64 of the
    JVM's callbacks (the recording's samples and those the full queue lost), and their mean is
    positive."""
    ex = extra_groups(d).get("Allocations", {})
    timed = ex.get("samples whose CPU time was measured (1 in 64)")
    mean = ex.get("mean CPU ns in the allocating thread per sample")
    samples = ex.get("samples", 0)
    calls = samples + ex.get("lost: queue full", 0)  # a callback whose record found no room
    print(f"price: {timed} callbacks timed of {calls} callbacks, mean {mean} ns")
    if timed is None or not samples // 64 - 1 <= timed <= calls // 64 + 1:
        CK.fail(f"{timed} callbacks timed for {samples} samples: not 1 in 64")
    if timed and (mean is None or mean <= 0):
        CK.fail(f"{timed} callbacks timed but the mean CPU is {mean}")


def check_split(d, truth, tol_pp, tol_total):
    sites = ("smallSite", "mediumSite", "largeSite")
    est = dict.fromkeys(sites, 0)
    p = Profile(d)
    n = 0
    for t, na in tables(d):
        for st, w in zip(na["stack"], na["weight"]):
            if w <= 0:
                continue
            funcs = stack_funcs(p, st)
            if funcs[0][1] != "Allocation":
                CK.fatal(f"leaf frame {funcs[0][0]} is not in the Allocation category")
            s = site_of(funcs, sites)
            if s:
                if funcs[0][0] != "byte[]":
                    CK.fatal(f"{s} allocates byte[], the leaf says {funcs[0][0]}")
                est[s] += w
                n += 1
    real_total = sum(truth[s] for s in sites)
    est_total = sum(est.values())
    print(f"split: {n} samples; estimated {est_total} bytes, measured {real_total} "
          f"(thread total {truth['total']})")
    if n < 100:
        CK.fatal(f"only {n} allocation samples in the sites")
    for s in sites:
        e, r = 100.0 * est[s] / est_total, 100.0 * truth[s] / real_total
        print(f"  {s}: estimated {e:.1f} %, measured {r:.1f} %")
        if abs(e - r) > tol_pp:
            CK.fail(f"{s} off by {e - r:+.1f} pp (tolerance {tol_pp})")
    ratio = est_total / truth["total"]
    print(f"  estimated / allocated by the thread: {ratio:.3f}")
    if abs(ratio - 1) > tol_total:
        CK.fail(f"total estimate off by {100 * (ratio - 1):+.1f} % (tolerance "
                f"{100 * tol_total:.0f} %)")


def pair(na):
    """The table's allocations left without a free ({address: (stack, bytes)}) and its frees,
    failing on a free that does not mirror an earlier allocation of the same table."""
    open_, frees = {}, 0
    for st, w, a in zip(na["stack"], na["weight"], na["memoryAddress"]):
        if w > 0:
            if a in open_:
                CK.fatal(f"address {a} allocated twice without a free")
            open_[a] = (st, w)
            continue
        if a not in open_:
            CK.fatal(f"a free of address {a} without its allocation before it")
        ast, aw = open_.pop(a)
        if ast != st or aw != -w:
            CK.fatal(f"the free of {a} does not mirror its allocation")
        frees += 1
    return open_, frees


def check_balanced(d, label, may_be_empty=False):
    """may_be_empty: the last file of a loop= series holds only what came after the last
    period, possibly no allocation (a loaded run: 208 ms after the workload had finished)."""
    rows = frees = 0
    for t, na in tables(d):
        rows += na["length"]
        frees += pair(na)[1]
    print(f"{label}: {rows} allocation rows, {frees} frees, all paired")
    if rows == 0 and not may_be_empty:
        CK.fatal(f"{label} has no allocation rows")


def check_own(d, label):
    """Issue 23: meta.extra "Allocations" counts this recording's samples only. Each sample the
    consumer took is a row of the file (weight > 0) or counted lost, and each free it paired is
    a row (weight < 0): a count left over from an earlier recording breaks the sums."""
    ex = extra_groups(d).get("Allocations", {})
    allocs = frees = 0
    for _, na in tables(d):
        allocs += sum(1 for w in na["weight"] if w > 0)
        frees += sum(1 for w in na["weight"] if w < 0)
    lost = sum(ex.get(k, 0) for k in ("lost: no registered thread",
                                      "lost: model out of memory or untagged",
                                      "lost: earlier period"))
    print(f"{label}: meta.extra: {ex.get('samples')} samples, {lost} lost, "
          f"{ex.get('frees of sampled objects')} frees; the file: {allocs} rows, {frees} frees")
    if ex.get("samples") != allocs + lost or ex.get("frees of sampled objects") != frees:
        CK.fatal(f"{label}: meta.extra's allocation counts are not this recording's own")


def check_live(d):
    p = Profile(d)
    held = dropped = held_all = dropped_all = 0
    frees = 0
    for t, na in tables(d):
        open_, n = pair(na)
        frees += n
        for st, w in na_pairs(na):
            s = site_of(stack_funcs(p, st), ("heldSite", "droppedSite"))
            if s == "heldSite":
                held_all += w
            elif s == "droppedSite":
                dropped_all += w
        for a, (st, w) in open_.items():
            s = site_of(stack_funcs(p, st), ("heldSite", "droppedSite"))
            if s == "heldSite":
                held += w
            elif s == "droppedSite":
                dropped += w
    print(f"live: {frees} frees; allocated heldSite {held_all}, droppedSite {dropped_all}; "
          f"retained heldSite {held}, droppedSite {dropped}")
    if held_all == 0 or dropped_all == 0:
        CK.fatal("no allocations sampled at heldSite or droppedSite")
    if held < 0.9 * held_all:
        CK.fatal("less than 90 % of heldSite's sampled bytes are retained")
    if dropped > 0.1 * dropped_all:
        CK.fatal("more than 10 % of droppedSite's sampled bytes are retained after GC")


def check_share(d, label, min_share, summary):
    p = Profile(d)
    held = retained = allocated = 0
    for _, na in tables(d):
        open_, _ = pair(na)
        allocated += sum(w for w in na["weight"] if w > 0)
        for st, w in open_.values():
            funcs = stack_funcs(p, st)
            retained += w
            if len(funcs) > 1 and funcs[1][0].endswith("AllocWorkload.heldSite"):
                held += w
    ex = extra_groups(d).get("Allocations", {})
    late = ex.get("frees the JVM had not posted yet, collected at a dump or stop", 0)
    share = 100.0 * held / retained if retained else 0.0
    print(f"{label}: heldSite holds {share:.1f} % of the retained bytes ({held} of {retained}); "
          f"{ex.get('frees of sampled objects')} frees, {late} of them collected late")
    if held == 0:
        CK.fatal(f"{label}: no retained bytes of heldSite")
    if share < min_share:
        CK.fail(f"{label}: heldSite holds {share:.1f} % of the retained bytes, under {min_share} %")
    if summary is None:
        return
    with open(summary, encoding="utf-8") as f:
        a = json.load(f)["allocations"]
    top = a["retaining"][0] if a["retaining"] else {}
    print(f"{label}: summary: allocated {a['allocatedBytes']:.0f}, retained "
          f"{a['retainedBytes']:.0f}, top retaining {top.get('name')} {top.get('bytes')}")
    if (a["allocatedBytes"] != allocated or a["retainedBytes"] != retained
            or not top.get("name", "").endswith("AllocWorkload.heldSite") or top["bytes"] != held):
        CK.fail(f"{label}: fxprof summary's allocation figures are not the file's "
                f"(allocated {allocated}, retained {retained}, heldSite {held})")


def na_pairs(na):
    return ((st, w) for st, w in zip(na["stack"], na["weight"]) if w > 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("split", "live", "share", "balanced", "balanced_last", "own"))
    ap.add_argument("profile")
    ap.add_argument("--truth")
    ap.add_argument("--tol-pp", type=float, default=6.0)
    ap.add_argument("--tol-total", type=float, default=0.15)
    ap.add_argument("--min-share", type=float, default=80.0)
    ap.add_argument("--summary")
    a = ap.parse_args()
    d = load_profile(a.profile)
    if a.mode == "split":
        truth = {}
        with open(a.truth, encoding="utf-8") as f:
            for line in f:
                k, v = line.split()
                truth[k] = int(v)
        check_split(d, truth, a.tol_pp, a.tol_total)
        check_counter(d)
        check_price(d)
    elif a.mode == "live":
        check_live(d)
    elif a.mode == "share":
        check_share(d, a.profile, a.min_share, a.summary)
    elif a.mode == "own":
        check_own(d, a.profile)
    else:
        check_balanced(d, a.profile, may_be_empty=a.mode == "balanced_last")
    return CK.exit_code()


if __name__ == "__main__":
    sys.exit(main())
