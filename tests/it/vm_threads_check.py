#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the profiles of vm_threads_test.sh (issue 16 items 4-5: threads that are not Java threads).

usage: vm_threads_check.py --label NAME RUN_DIR
       vm_threads_check.py --handles gc|jit|cthread RUN_DIR   (prints "t-1,t-4": the handles of
       the tracks whose samples and functions views the checks read, merged: GC threads in gc,
       compiler threads in jit, none in cthread)
Reads gc, jit, cthread .json.gz and what profiler-cli said of them (NAME.threads.json,
NAME.all.samples.json and NAME.all.functions.json of all tracks merged, NAME.tracks.samples.json
and NAME.tracks.functions.json of the tracks --handles names merged):
  gc:      a track named like a GC thread ("GC Thread", "G1 ") whose profiler-cli category
           breakdown has samples in "GC", and at least one such track with a libjvm function
           named by a symbol (not "libjvm.so+0x...");
  jit:     the same for a compiler thread ("C1 CompilerThre", "C2 CompilerThre") and the
           "JIT compiler" category;
  cthread: one track "fxmixed-burner", its tid no Java thread's, at least 10 samples whose stack
           has fxmixed_cthread_spin above fxmixed_cthread_main, both in the Native category, and
           no Java frame on that track;
  all:     the merged views count every sample of the profile's tracks (profiler-cli rendered
           them all) and list functions;
           meta.extra "Threads that are not Java threads" counts at least as many registered
           threads as there are such tracks; no sample of any track has the frame "[native: walk
           stopped (stack bounds unknown)]" and meta.extra "Native stacks" counts no such stop
           (the first sample of each such thread had it before the stack table), while some
           samples found their stack in the stack table; no track under a comm the kernel
           cut ("C2 CompilerThre"): compiler threads are "C2 CompilerThread0" (or say "…").
  compile tasks (issue 32, item 5), in jit's profile and in its collapsed conversion (jit.txt):
           under C2Compiler::compile_method and under C1's Compiler::compile_method, at least 3
           samples each whose next frame names a Java method ("pkg.Class.method"); every such
           name is the method of a "JIT compiled" marker (JVMTI's CompiledMethodLoad, an oracle
           of its own: compiles that never installed are no more than 10 % of the names); meta.extra
           "Compile tasks" counts the frames placed as the profile holds them, and no malformed
           record; the collapsed file holds the same frames under the same entries.
"""
import os
import re
import sys

from profile_lib import Profile, load_json as load, run_dir_args


# The tracks of each profile read one by one: (name prefixes, their category).
TRACKS = {"gc": (("GC Thread", "G1 "), "GC"),
          "jit": (("C1 CompilerThre", "C2 CompilerThre"), "JIT compiler")}


def handles(run, name):
    if name not in TRACKS:
        return []
    return [t["threadHandle"] for t in load(os.path.join(run, f"{name}.threads.json"))["threads"]
            if t["name"].startswith(TRACKS[name][0])]


def check_merged(run, name, profile, check):
    """The merged selection of all tracks: as many samples as the profile's tracks hold."""
    s = load(os.path.join(run, f"{name}.all.samples.json"))["categoryBreakdown"]["totalSamples"]
    want = sum(len(t["samples"]["stack"]) for t in profile.doc["threads"])
    check(s == want > 0, f"{name}: profiler-cli's merged tracks hold {s} samples, profile {want}")
    fns = load(os.path.join(run, f"{name}.all.functions.json"))["functions"]
    check(len(fns) > 0, f"{name}: profiler-cli lists {len(fns)} functions of the merged tracks")


def pcli_tracks(run, name):
    """(track names, category breakdown dict, functions) of profiler-cli's merged selection of
    the tracks TRACKS names: a check that some track has X, or none has Y, reads the same there."""
    names = [t["name"] for t in load(os.path.join(run, f"{name}.threads.json"))["threads"]
             if t["name"].startswith(TRACKS[name][0])]
    if not names:
        return [], {}, []
    s = load(os.path.join(run, f"{name}.tracks.samples.json"))
    cats = {c["name"]: c["samples"] for c in s["categoryBreakdown"]["categories"]}
    fns = load(os.path.join(run, f"{name}.tracks.functions.json"))["functions"]
    return names, cats, fns


def named_libjvm(fns):
    return [f["name"] for f in fns
            if f.get("library", "").startswith("libjvm") and not f["name"].startswith("libjvm")]


def check_full_names(run, check):
    """JVM threads under their full names (issue 30 item 11, core/symbols/jvm_names.c): no track is
    named by a comm the kernel cut ("C2 CompilerThre", "VM Periodic Tas", "Monitor Deflati"); a
    compiler thread is "C1/C2 CompilerThread" + its number, or its comm marked cut ("…")."""
    cut = ("C1 CompilerThre", "C2 CompilerThre", "VM Periodic Tas", "Monitor Deflati")
    full = re.compile(r"^C[12] CompilerThread[0-9]+$|^C[12] CompilerThre\u2026$")
    for name in ("gc", "jit"):
        names = [t["name"] for t in Profile(os.path.join(run, f"{name}.json.gz")).doc["threads"]]
        bare = [n for n in names if n in cut]
        check(not bare, f"{name}: tracks named by a cut comm: {bare}")
        comp = [n for n in names if n.startswith(("C1 Compiler", "C2 Compiler"))]
        odd = [n for n in comp if not full.match(n)]
        check(bool(comp) and not odd if name == "jit" else not odd,
              f"{name}: compiler threads {comp} under their full names (not {odd})")
        ex = Profile(os.path.join(run, f"{name}.json.gz")).extra(
            "Threads that are not Java threads") or {}
        n_full = ex.get("names written out in full (the kernel keeps 15 characters)", -1)
        check(n_full >= 1, f"{name}: meta.extra counts {n_full} names written out in full")


ENTRY = re.compile(r"^(C2Compiler|Compiler)::compile_method(\(.*\))?$")
JAVA_NAME = re.compile(r"^[A-Za-z_$][\w$]*(\.[\w$]+)+\.[\w$<>]+$")


def check_compile_tasks(run, check):
    """The method being compiled under the compiler's entry (compile_tasks.c)."""
    p = Profile(os.path.join(run, "jit.json.gz"))
    installed = set()
    for t in p.doc["threads"]:
        for m in p.markers(t, "JIT compiled"):
            installed.add(p.strings[m["data"]["method"]].split("(")[0])
    under = {"C2Compiler": [], "Compiler": []}
    labels = 0
    for path in p.stacks():
        names = [p.name[f] for f in path]
        for i, n in enumerate(names[:-1]):
            m = ENTRY.match(n)
            if m:
                nxt = names[i + 1]
                if JAVA_NAME.match(nxt):
                    under[m.group(1)].append(nxt)
                labels += nxt.startswith("[compiling:")
                break
    for entry, got in under.items():
        check(len(got) >= 3, f"jit: {len(got)} samples with a compiled method under {entry}")
    names = set(under["C2Compiler"]) | set(under["Compiler"])
    strays = sorted(names - installed)
    check(names and len(strays) <= len(names) // 10,
          f"jit: {len(strays)} of {len(names)} compiled-method names are no JIT-compiled "
          f"marker's method: {strays[:5]}")
    ex = p.extra("Compile tasks") or {}
    placed = ex.get("frames placed under the compiler's compile_method", -1)
    total = sum(len(v) for v in under.values()) + labels
    check(placed >= total > 0, f"jit: meta.extra places {placed} compile frames, profile has {total}")
    check(ex.get("malformed records", 0) == 0, f"jit: malformed compile task records: {ex}")
    collapsed = 0
    with open(os.path.join(run, "jit.txt"), encoding="utf-8") as f:
        for line in f:
            frames = line.rsplit(" ", 1)[0].split(";")
            collapsed += any(ENTRY.match(a) and b in names for a, b in zip(frames, frames[1:]))
    check(collapsed >= 6, f"jit.txt: {collapsed} collapsed stacks with a compile under its entry")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--handles":
        print(",".join(handles(sys.argv[3], sys.argv[2])))
        return 0
    run, ck = run_dir_args("vm_threads_check")
    check = ck.check

    for name, (prefixes, cat) in TRACKS.items():
        names, cats, fns = pcli_tracks(run, name)
        check(cats.get(cat, 0) > 0, f"{name}: tracks {names} have samples in {cat!r}: {cats}")
        check(bool(named_libjvm(fns)), f"{name}: libjvm functions named on tracks {names}: "
              f"{named_libjvm(fns)[:3]}")
        other = sorted(k for k, v in cats.items() if k not in (cat, "Idle") and v > 0)
        check(not other, f"{name}: no sample of tracks {names} outside {cat!r} and Idle: {other}")

    p = Profile(os.path.join(run, "cthread.json.gz"))
    burner = p.threads("fxmixed-burner")
    java_tids = {t["tid"] for t in p.doc["threads"] if t["name"] in ("main", "DestroyJavaVM")}
    check(len(burner) == 1 and burner[0]["tid"] not in java_tids,
          f"cthread: one track 'fxmixed-burner' with a tid of its own: "
          f"{[t['tid'] for t in burner]}, Java {sorted(java_tids)}")
    good = java = 0
    for t in burner:
        for s in t["samples"]["stack"]:
            path = p.paths[s] if s is not None else ()
            names = [p.name[f] for f in path]
            java += any(p.is_js[f] or p.cat[f] == "Java" for f in path)
            if "fxmixed_cthread_main" in names and "fxmixed_cthread_spin" in names:
                i, j = names.index("fxmixed_cthread_main"), names.index("fxmixed_cthread_spin")
                good += i < j and p.cat[path[i]] == "Native" and p.cat[path[j]] == "Native"
    check(good >= 10, f"cthread: {good} samples with fxmixed_cthread_spin over fxmixed_cthread_main")
    check(java == 0, f"cthread: {java} samples of the C thread with a Java frame")

    for name in ("gc", "jit", "cthread"):
        q = p if name == "cthread" else Profile(os.path.join(run, f"{name}.json.gz"))
        check_merged(run, name, q, check)
        ex = q.extra("Threads that are not Java threads") or {}
        got = ex.get("registered (GC, JIT, VM, JNI-created...)", -1)
        tracks = sum(1 for t in q.doc["threads"] if t["name"].startswith(
            ("GC Thread", "G1 ", "C1 Compiler", "C2 Compiler", "VM Thread", "fxmixed-burner")))
        check(got >= tracks > 0, f"{name}: meta.extra says {got} registered, {tracks} such tracks")
    check_full_names(run, check)
    check_compile_tasks(run, check)
    unknown = "[native: walk stopped (stack bounds unknown)]"
    for name in ("gc", "jit", "cthread"):
        q = p if name == "cthread" else Profile(os.path.join(run, f"{name}.json.gz"))
        stopped = total = 0
        for t in q.doc["threads"]:
            for s in t["samples"]["stack"]:
                total += 1
                stopped += s is not None and any(q.name[f] == unknown for f in q.paths[s])
        check(stopped == 0, f"{name}: {stopped} of {total} samples end in {unknown!r}")
        stops = (q.extra("Native stacks") or {}).get("walk stopped: thread stack bounds unknown", 0)
        check(stops == 0, f"{name}: meta.extra counts {stops} walks stopped for unknown bounds")
        ex = q.extra("Threads that are not Java threads") or {}
        found = ex.get("samples whose stack was found in the stack table (before own bounds)", -1)
        check(found > 0, f"{name}: {found} samples found their stack in the stack table")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
