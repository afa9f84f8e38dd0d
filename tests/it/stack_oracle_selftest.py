#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Self-test of stack_shape_check.py (the shape and recovered-stack oracles of issue 20): it
builds small processed-format profiles by hand, one good and one per defect the oracle must
catch, and runs the checker on each. A checker that accepts a defect fails this test, so the
oracle cannot silently become one that asserts nothing. No JVM needed.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stack_shape_check.py")
M = "fxagent.stacks.Mega"
CATS = [
    {"name": "Other", "color": "grey", "subcategories": ["Other"]},
    {"name": "Idle", "color": "transparent", "subcategories": ["Other"]},
    {"name": "Java", "color": "yellow", "subcategories": [
        "Other", "Interpreted", "JIT (C1)", "JIT (C2)", "Inlined", "Native method",
        "Recovered: stub"]},
    {"name": "VM", "color": "purple", "subcategories": [
        "Other", "Safepoint", "Class loading", "Stub", "Recovered stub", "Receiver class"]},
]
# name -> (isJS, category, subcategory)
NO_ENTRY = "[native: walk stopped (Java frames not walked to the call stub)]"
KIND = {"[AGCT: unknown Java]": (False, 0, 0), "itable stub": (False, 2, 6),
        "[idle]": (False, 1, 0), "__clone3": (False, 0, 0), "start_thread": (False, 0, 0),
        "thread_native_entry(Thread*)": (False, 0, 0), "main": (False, 0, 0),
        "JavaCalls::call_helper(JavaValue*)": (False, 0, 0), NO_ENTRY: (False, 0, 0),
        "call_stub": (False, 3, 3)}
# issue 32 item 3: receiver classes under a dispatch stub
KIND.update({M + "$" + c: (False, 3, 5) for c in ("Circle", "Square", "Rect", "Hexagon")})
KIND["java.lang.Integer"] = (False, 3, 5)


def receivers_in(samples):
    return sum(n for n, path in samples if KIND.get(path[-1][0], (True, 0, 0))[1:] == (3, 5))


def profile(samples, counter=None, named=None):
    """samples: list of (count, [(name, line), ...] root first)."""
    strings, funcs, frames, stacks = [], {}, {}, {}
    ft = {k: [] for k in ("func", "line", "category", "subcategory", "address", "inlineDepth")}
    fu = {"name": [], "isJS": []}
    st = {"frame": [], "prefixOffset": []}

    def func(name):
        if name not in funcs:
            funcs[name] = len(fu["name"])
            strings.append(name)
            fu["name"].append(len(strings) - 1)
            fu["isJS"].append(KIND.get(name, (True,))[0])
        return funcs[name]

    def frame(name, line, recovered):
        key = (name, line, recovered)
        if key not in frames:
            frames[key] = len(ft["func"])
            js, cat, sub = KIND.get(name, (True, 2, 3))
            if recovered:
                sub = 6
            for k, v in (("func", func(name)), ("line", line), ("category", cat),
                         ("subcategory", sub), ("address", -1), ("inlineDepth", 0)):
                ft[k].append(v)
        return frames[key]

    stack_of = []
    for n, path in samples:
        parent = None
        for name, line, *rec in path:
            f = frame(name, line, bool(rec) or name == "itable stub")
            key = (parent, f)
            if key not in stacks:
                stacks[key] = len(st["frame"])
                st["frame"].append(f)
                st["prefixOffset"].append(0 if parent is None else stacks[key] - parent)
            parent = stacks[key]
        stack_of += [parent] * n
    for t in (ft, fu, st):
        t["length"] = len(next(iter(t.values())))
    extra = [{"label": "Losses", "entries": [
        {"label": "ring drops (all threads)", "format": "integer", "value": 0}]}]
    extra.append({"label": "Receivers under dispatch stubs", "entries": [
        {"label": "receivers named (a frame under the stub)", "format": "integer",
         "value": receivers_in(samples) if named is None else named}]})
    if counter is not None:
        extra.append({"label": "Recovery", "entries": [
            {"label": "recovered stacks", "format": "integer", "value": counter}]})
    return {"meta": {"categories": CATS, "extra": extra},
            "shared": {"stringArray": strings, "stackTable": st, "frameTable": ft,
                       "funcTable": fu},
            "threads": [{"name": "mega", "samples": {
                "stack": stack_of, "weight": None, "length": len(stack_of)}}]}


BASE = [("java.lang.Thread.run", 833), (M + ".lambda$main$0", 314), (M + ".work", 289)]
AREA = BASE + [(M + ".loop", 277)]
PERIM = BASE + [(M + ".loop", 278)]
# the native frames below the Java ones, down to the thread's start (issue 32)
ROOT = [("__clone3", None), ("start_thread", None), ("thread_native_entry(Thread*)", None),
        ("JavaCalls::call_helper(JavaValue*)", None), ("call_stub", None)]
GOOD = [(100, AREA + [(M + "$Polygon.area", 203)]),
        (50, PERIM + [(M + "$Polygon.perim", 212)]),
        (30, AREA + [("itable stub", None), (M + "$Circle", None)]),
        (30, AREA + [("itable stub", None), (M + "$Square", None)]),
        (20, AREA + [("itable stub", None), (M + "$Rect", None)]),
        (15, AREA + [("itable stub", None), (M + "$Hexagon", None)]),
        (5, AREA + [("itable stub", None)]),
        (20, PERIM + [(M + "$Circle.perim", 64, "recovered")]),
        (100, ROOT + PERIM),
        (30, [("[idle]", None)])]
# every Java stack walked down to the thread's start, as the bare-root oracle wants
GOOD = [(n, ROOT + s if s[0][0] == BASE[0][0] else s) for n, s in GOOD]
CASES = [
    # name, samples, counter, must pass, text the output must contain[, receivers named]
    ("good", GOOD, 120, True, "OK"),
    ("a receiver that is not one of the call site's", GOOD + [
        (1, AREA + [("itable stub", None), ("java.lang.Integer", None)])], 121, False,
     "not receivers of Mega.loop's call sites: {'java.lang.Integer': 1}"),
    ("stub samples without a receiver", GOOD + [(10, AREA + [("itable stub", None)])], 130,
     False, "carry a receiver frame"),
    ("a receiver not under a stub", GOOD + [
        (1, AREA + [(M + "$Circle.area", 60), (M + "$Circle", None)])], 120, False,
     "not right above a dispatch stub"),
    ("receivers named disagrees", GOOD, 120, False, "meta.extra says 94 receivers named", 94),
    ("one receiver class for all", [g for g in GOOD if len(g[1]) < 6 or g[1][-1][0] in (
        "itable stub", M + "$Circle")], 35, False, "1 receiver classes, at least 4"),
    ("recovered on a line no ordinary sample shows", GOOD + [
        (3, BASE + [(M + ".loop", 276), ("itable stub", None)])], 123, False,
     "mismatch: 3 x itable stub on fxagent.stacks.Mega.loop:276"),
    ("recovered under a different caller path", GOOD + [
        (2, [(M + ".work", 289), (M + ".loop", 277), ("itable stub", None)])], 122, False,
     "mismatch: 2 x itable stub"),
    ("recovered frame under an ordinary one", GOOD + [
        (1, AREA + [("itable stub", None), (M + "$Circle.area", 60)])], 121, False,
     "not on top: 1 x"),
    ("counter disagrees", GOOD, 119, False, "meta.extra says 119 recovered, the samples hold 120"),
    ("no counter", GOOD, None, False, "no meta.extra entry"),
    ("too many failure frames", GOOD + [(20, [("[AGCT: unknown Java]", None)])], 120, False,
     "have no stack"),
    ("caller missing", GOOD + [(20, BASE)], 120, False, "Mega.loop is on"),
    ("a foreign leaf", GOOD + [(1, AREA + [("java.lang.String.hashCode", 10)])], 120, False,
     "neither an implementation nor a stub"),
    ("a native root that is not the thread's start", GOOD + [
        (1, [("main", None), ("JavaCalls::call_helper(JavaValue*)", None), ("call_stub", None)]
         + PERIM)], 120, False, "not the thread's start chain"),
    ("no call stub under the bottom Java frame", GOOD + [(1, ROOT[:-1] + PERIM)], 120, False,
     "not the thread's start chain"),
    ("too many call-stub roots", GOOD + [(20, [(NO_ENTRY, None)] + PERIM)], 120, False,
     "ordinary stacks rooted at"),
    ("a Java root with nothing below it", GOOD + [(1, PERIM)], 120, False,
     "rooted neither at the thread's start nor at a named mark"),
    ("no recovered sample", [g for g in GOOD if "itable stub" not in [n for n, *_ in g[1]]
                             and len(g[1][-1]) == 2], None, False, "no recovered sample"),
]


def main():
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for name, samples, counter, ok, text, *named in CASES:
            path = os.path.join(d, "p.json.gz")
            with gzip.open(path, "wt", encoding="utf-8") as f:
                json.dump(profile(samples, counter, *named), f)
            p = subprocess.run([sys.executable, CHECK, "--profile", path, "--label", name],
                               capture_output=True, text=True)
            good = (p.returncode == 0) == ok and text in p.stdout
            print(f"{'ok  ' if good else 'FAIL'} {name}: exit {p.returncode}, expected "
                  f"{'0' if ok else 'non-zero'} and {text!r} in the output")
            if not good:
                bad += 1
                print(p.stdout + p.stderr)
    return bad


if __name__ == "__main__":
    sys.exit(main())
