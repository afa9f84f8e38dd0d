#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Known answers for frame types (issue 32 item 1, tests/it/frame_types_test.sh): reads the run
directory's xint/c1/tiered profiles (.json.gz) and their `fxprof convert --annotate` outputs
(.collapsed) and checks, on the thread types-worker unless said otherwise:
  every run  in the second half of the run, >= 80 % of the worker's Java frames typed (subcategory not Other); an Inlined frame
             has inlineDepth >= 1 and every other frame 0; the collapsed file's frames with a
             suffix weigh exactly what the profile's frames of that type weigh (notInlined's)
  xint       no frame of any thread C1, C2 or Inlined; notInlined Interpreted; depth=D/M, D
             the worker's depth at caller (caller_depth of the tiered run), M = D - XINT_CUT
             (async-profiler's jstackdepth=N/M, its DepthTests): a worker stack of Java frames
             ending in caller is whole, exactly D deep (over M: only a stack over D is cut,
             issue 30); one ending deeper has "[truncated]" at its root and exactly M frames,
             "[truncated]" one of them (depth= counts frames of every kind, issue 32 item 7):
             the leaf-most M - 1 of its whole stack, the caller stack's leaf side and the leaf
usage: frame_types_check.py [--label NAME] RUN_DIR | --xint-depth PROFILE
  c1         no frame of any thread C2; notInlined C1 in >= 80 % of its frames; (wall mode)
             thread main's Java frames, waiting in Thread.join, typed from the frame anchor:
             >= 80 % of them (native methods aside) Interpreted, none compiled; the native
             method atop them (Object.wait/wait0) Interpreted in >= 80 % (its frame runs in the
             interpreter's native entry)
  tiered     notInlined (dontinline) never Inlined, C2 in >= 50 % of its frames; tiny Inlined in
             >= 50 % of its typed frames, each at depth 1 under a compiled caller
  c1, tiered no "[truncated]" in the worker's stacks (nothing reaches depth=64)"""
import collections
import itertools
import os
import re
import sys

from profile_lib import Profile, run_dir_args

WORKER = "types-worker"
JIT = ("JIT (C1)", "JIT (C2)", "Inlined")
NATIVE_WAIT = ("java.lang.Object.wait", "java.lang.Object.wait0")  # native methods (17, 25)
SUFFIX = {"Interpreted": "_[0]", "JIT (C1)": "_[1]", "JIT (C2)": "_[j]", "Inlined": "_[i]"}
XINT_CUT = 2  # xint's depth=D/M: M = D - XINT_CUT frames kept of a stack over D


def short(name):
    return name.split("(")[0].rsplit(".", 1)[-1]


def samples(p, thread, late=False):
    """(path, weight) of the thread's samples; late: only its second half in time, the steady
    state (a compiled method's frames are typed once its load event reached the code table,
    which on a loaded machine can take a good part of a short run)."""
    for t in p.threads(thread):
        s = t["samples"]
        w = s.get("weight") or [1] * len(s["stack"])
        times = s.get("time") or list(itertools.accumulate(s.get("timeDeltas") or []))
        times = times or [0] * len(s["stack"])
        half = (times[0] + times[-1]) / 2 if late and times else None
        for st, wt, tm in zip(s["stack"], w, times):
            if half is None or tm >= half:
                yield p.path(st), wt


def check_run(cfg, run, c):
    p = Profile(os.path.join(run, cfg + ".json.gz"))
    depth = p.doc["shared"]["frameTable"].get("inlineDepth")
    java = [f for f in range(len(p.name)) if p.cat[f] == "Java" and p.sub[f] != "Native method"]
    per = collections.defaultdict(collections.Counter)  # short name -> sub -> weight
    total = typed = 0
    worker_samples = 0
    for path, w in samples(p, WORKER, late=True):
        jf = [f for f in path if f in java_set(java)]
        if jf:
            worker_samples += w
        for f in jf:
            per[short(p.name[f])][p.sub[f]] += w
            total += w
            typed += w if p.sub[f] in SUFFIX else 0
    c.check(total > 100, f"{cfg}: the worker has Java frames ({total})")
    c.check(typed >= 0.8 * total, f"{cfg}: {typed} of {total} worker Java frames typed (>= 80 %)")
    bad_depth = [f for f in java if depth and ((p.sub[f] == "Inlined") != (depth[f] >= 1))]
    c.check(not bad_depth, f"{cfg}: inlineDepth >= 1 exactly on Inlined frames ({len(bad_depth)} not)")
    anywhere = collections.Counter(p.sub[f] for path in p.stacks() for f in path if p.cat[f] == "Java")
    ni, tiny = per["notInlined"], per["tiny"]
    print(f"{c.prefix}{cfg}: late half: notInlined {dict(ni)}; tiny {dict(tiny)}; all threads, "
          f"whole run: {dict(anywhere)}; meta.extra: {p.extra('Frame types')}")
    trunc = sum(1 for path, _ in samples(p, WORKER) for f in path if p.name[f] == "[truncated]")
    if cfg == "xint":
        c.check(not any(anywhere[s] for s in JIT), f"xint: no C1, C2 or Inlined frame ({dict(anywhere)})")
        # "Other" (untyped) and "Recovered" (a recovery's top frame, e.g. the method the
        # interpreter is entering: docs/VALIDATION.md 8.5f) claim no type
        claimed = sum(ni.values()) - ni["Other"] - ni["Recovered"]
        c.check(ni["Interpreted"] > 0 and ni["Interpreted"] == claimed,
                f"xint: notInlined typed Interpreted only ({dict(ni)})")
        js = {f for f in range(len(p.name)) if p.cat[f] == "Java"}  # native methods too
        depth_opt = caller_depth(Profile(os.path.join(run, "tiered.json.gz")))
        cut_to = depth_opt - XINT_CUT
        by_leaf = collections.Counter()  # (leaf Java frame, cut, frames of every kind)
        java_only = set()  # the same keys, for stacks of Java frames only (plus "[truncated]")
        names = collections.defaultdict(set)  # java_only's keys -> their frames' names
        for path, w in samples(p, WORKER):
            jf = [f for f in path if f in js]
            if not jf:
                continue
            cut = p.name[path[0]] == "[truncated]"
            key = (short(p.name[jf[-1]]), cut, len(path))
            by_leaf[key] += w
            if len(jf) + cut == len(path):
                java_only.add(key)
                names[key].add(tuple(p.name[f] for f in path))
        # depth=D/M counts every frame, "[truncated]" one of them (issue 32 item 7): a stack over
        # D frames is cut to exactly M, a whole one holds at most D; a stack of Java frames
        # ending in caller is exactly D deep, whole (D > M); one ending a frame deeper is cut
        ok = all(n == cut_to if cut else n <= depth_opt for _, cut, n in by_leaf)
        ok = ok and not any(k[0] == "caller" and k[1] for k in java_only)
        ok = ok and not any(k[0] in ("notInlined", "tiny") and not k[1] for k in java_only)
        c.check(ok and ("caller", False, depth_opt) in java_only and any(k[1] for k in java_only),
                f"xint: depth={depth_opt}/{cut_to}: caller-leaf stacks whole, deeper ones "
                f"'[truncated]' at {cut_to} frames of every kind ({dict(by_leaf)})")
        # the leaf side kept: under "[truncated]", the whole caller stack's leaf-most frames
        # and the deeper leaf (notInlined or tiny, called by caller)
        whole = names[("caller", False, depth_opt)]
        kept = {t[-(cut_to - 2):] for t in whole} if cut_to > 2 else {()}
        cuts = {t for k, ts in names.items() if k[1] for t in ts}
        bad = [t for t in cuts if t[1:-1] not in kept or short(t[-1]) not in ("notInlined", "tiny")]
        c.check(cuts and whole and not bad,
                f"xint: depth={depth_opt}/{cut_to}: each cut stack is '[truncated]' over the "
                f"leaf-most frames of caller's whole stack {sorted(whole)} and the leaf "
                f"({len(bad)} of {len(cuts)} not: {sorted(bad)[:3]})")
    else:
        c.check(trunc == 0, f"{cfg}: no '[truncated]' below depth=64 ({trunc})")
    if cfg == "c1":
        c.check(anywhere["JIT (C2)"] == 0, f"c1: no C2 frame in any thread ({anywhere['JIT (C2)']})")
        c.check(ni["JIT (C1)"] >= 0.8 * sum(ni.values()), "c1: notInlined C1 in >= 80 % of its frames")
        # only main's samples inside Thread.join, where the walk starts at the anchor: after
        # join, main's println may run code the JIT compiled for other threads
        main = collections.Counter()
        for path, w in samples(p, "main", late=True):
            if not any(p.name[f].startswith("java.lang.Thread.join") for f in path):
                continue
            for f in path:
                if f in java_set(java):
                    main[p.sub[f]] += w
        c.check(main["Interpreted"] > 0 and main["Interpreted"] >= 0.8 * sum(main.values())
                and not any(main[s] for s in JIT),
                f"c1 (wall): main's Java frames in Thread.join, from the anchor, Interpreted "
                f"({dict(main)})")
        # the native method those stacks end in (Object.wait, JDK 25's wait0), called from
        # interpreted join: its frame runs in the interpreter's native entry, typed by it
        # (async-profiler's _[0]); a native wrapper would leave it "Native method" (CompLevel_none)
        wait = collections.Counter()
        for path, w in samples(p, "main", late=True):
            js = [f for f in path if p.cat[f] == "Java"]
            if js and any(p.name[f].startswith("java.lang.Thread.join") for f in js) \
                    and p.name[js[-1]] in NATIVE_WAIT:
                wait[p.sub[js[-1]]] += w
        c.check(wait["Interpreted"] > 0 and wait["Interpreted"] >= 0.8 * sum(wait.values()),
                f"c1 (wall): the native method {'/'.join(NATIVE_WAIT)} atop main's Thread.join "
                f"typed Interpreted (the interpreter's native entry) in >= 80 % ({dict(wait)})")
    if cfg == "tiered":
        c.check(ni["Inlined"] == 0, f"tiered: dontinline notInlined never Inlined ({ni['Inlined']})")
        c.check(ni["JIT (C2)"] >= 0.5 * sum(ni.values()), "tiered: notInlined C2 in >= 50 % of its frames")
        tiny_typed = sum(tiny.values()) - tiny["Other"]
        c.check(tiny["Inlined"] >= 5 and tiny["Inlined"] >= 0.5 * tiny_typed,
                f"tiered: tiny Inlined in >= 50 % of its {tiny_typed} typed frames ({tiny['Inlined']})")
        under = collections.Counter()
        for path, w in samples(p, WORKER):
            for i, f in enumerate(path):
                if short(p.name[f]) == "tiny" and p.sub[f] == "Inlined" and i > 0:
                    par = path[i - 1]
                    under[(short(p.name[par]), p.sub[par], depth[f])] += w
        ok = all(k[0] == "caller" and k[1] in ("JIT (C1)", "JIT (C2)") and k[2] == 1 for k in under)
        c.check(under and ok, f"tiered: Inlined tiny at depth 1 under a compiled caller ({dict(under)})")
    whole = collections.Counter()  # the collapsed file holds the whole run
    for path, w in samples(p, WORKER):
        for f in path:
            if f in java_set(java) and short(p.name[f]) == "notInlined":
                whole[p.sub[f]] += w
    check_collapsed(cfg, run, whole, c)


_JS = {}


def java_set(java):
    key = id(java)
    if key not in _JS:
        _JS.clear()
        _JS[key] = set(java)
    return _JS[key]


def check_collapsed(cfg, run, ni, c):
    """The annotated collapsed file: notInlined's suffixed frames weigh what the profile says."""
    got = collections.Counter()
    with open(os.path.join(run, cfg + ".collapsed"), encoding="utf-8") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            for fr in stack.split(";"):
                m = re.fullmatch(r".*\.notInlined(_\[[01ji]\])?", fr)
                if m:
                    got[m.group(1) or ""] += int(count)
    want = collections.Counter({SUFFIX[s]: w for s, w in ni.items() if s in SUFFIX})
    c.check(+got - collections.Counter({"": got[""]}) == +want,
            f"{cfg}: collapsed --annotate notInlined suffixes {dict(got)} match the profile {dict(want)}")


def caller_depth(p):
    """The most common number of Java frames from the worker's root to caller, inclusive."""
    n = collections.Counter()
    for path, w in samples(p, WORKER):
        jf = [f for f in path if p.cat[f] == "Java"]
        for i, f in enumerate(jf):
            if short(p.name[f]) == "caller":
                n[i + 1] += w
                break
    return n.most_common(1)[0][0] if n else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--xint-depth":
        d = caller_depth(Profile(sys.argv[2]))
        print(f"{d}/{d - XINT_CUT}")
        return 0 if d - XINT_CUT >= 2 else 1
    run, c = run_dir_args("frame_types")
    for cfg in ("xint", "c1", "tiered"):
        check_run(cfg, run, c)
    return c.exit_code()


if __name__ == "__main__":
    raise SystemExit(main())
