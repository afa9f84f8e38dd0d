#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates tests/tools/bad/*.json and bad/expected.txt from good/min.json: each file breaks
exactly one rule of PROFILE-FORMAT.md §17.2, and expected.txt names the rule fxcheck must report.
The generated files are committed; run this only after changing a mutation, and review the diff:
    python3 tests/tools/make_bad_profiles.py
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
GOOD = json.load(open(os.path.join(HERE, "good", "min.json"), encoding="utf-8"))
MAIN = ("threads", 0)


def t0(p):
    return p["threads"][0]


def shared(p, table):
    return p["shared"][table]


def setitem(path, value):
    def f(p):
        obj = p
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value
    return f


def delitem(path):
    def f(p):
        obj = p
        for k in path[:-1]:
            obj = obj[k]
        del obj[path[-1]]
    return f


def unique_string_as_text(p):
    p["meta"]["markerSchema"][0]["fields"].append(
        {"key": "method", "label": "Method", "format": "unique-string"})
    t0(p)["markers"]["data"][0]["method"] = "com.example.App.compute"


def reserved_type(p):
    p["meta"]["markerSchema"][0]["name"] = "GCMajor"
    t0(p)["markers"]["data"][0]["type"] = "GCMajor"


def no_threads(p):
    p["threads"] = []
    p["meta"]["initialVisibleThreads"] = []
    p["meta"]["initialSelectedThreads"] = []


def gc_cause_string(p):
    # The §13 example as first published: a GC field keyed "cause" collides with data.cause.
    s = p["meta"]["markerSchema"][0]
    for k in ("tooltipLabel", "tableLabel", "chartLabel"):
        s[k] = s[k].replace("gcCause", "cause")
    s["fields"][1]["key"] = "cause"
    d = t0(p)["markers"]["data"][0]
    d["cause"] = d.pop("gcCause")


# (file, rule fxcheck must name, mutation, raw byte replacement or None)
CASES = [
    ("column-length.json", "column-length", setitem(("shared", "frameTable", "line"), [12, 42]), None),
    ("no-length.json", "missing", delitem(("shared", "stackTable", "length")), None),
    ("prefix-order.json", "prefix-order", setitem(("shared", "stackTable", "prefixOffset"), [0, 2, 0]), None),
    ("modified-utf8-nul.json", "utf8", setitem(("shared", "stringArray", 0), "@@BAD@@"), b"App\xc0\x80main"),
    ("cesu8-surrogates.json", "utf8", setitem(("shared", "stringArray", 0), "@@BAD@@"), b"App\xed\xa0\xbd\xed\xb8\x80"),
    ("no-grey.json", "category", setitem(("meta", "categories", 0, "color"), "darkgrey"), None),
    ("no-subcategories.json", "category", setitem(("meta", "categories", 1, "subcategories"), []), None),
    ("subcategory-range.json", "category", setitem(("shared", "frameTable", "subcategory"), [1, 9, 1]), None),
    ("subcategory-null.json", "category", setitem(("shared", "frameTable", "subcategory"), [1, None, 1]), None),
    ("unsorted-times.json", "time-order", setitem(MAIN + ("samples", "time"), [0.5, 2.5, 1.5, 3.5]), None),
    ("unsorted-deltas.json", "time-order", setitem(("threads", 1, "samples", "timeDeltas"), [2.75, -0.5]), None),
    ("dangling-frame.json", "index-range", setitem(("shared", "stackTable", "frame"), [0, 7, 2]), None),
    ("dangling-func-name.json", "index-range", setitem(("shared", "funcTable", "name"), [0, 99, 2]), None),
    ("dangling-resource-name.json", "index-range", setitem(("shared", "resourceTable", "name"), [6]), None),
    ("dangling-source-filename.json", "index-range", setitem(("shared", "sources", "filename"), [6]), None),
    ("dangling-sample-stack.json", "index-range", setitem(MAIN + ("samples", "stack"), [0, 1, 3, 0]), None),
    ("dangling-marker-name.json", "index-range", setitem(MAIN + ("markers", "name"), [42]), None),
    ("marker-name-text.json", "type", setitem(MAIN + ("markers", "name"), ["GC pause"]), None),
    ("two-main-threads.json", "main-thread", setitem(("threads", 1, "isMainThread"), True), None),
    ("reserved-marker-type.json", "reserved-type", reserved_type, None),
    ("marker-without-schema.json", "marker-schema", setitem(MAIN + ("markers", "data", 0, "type"), "JvmNoSuchSchema"), None),
    ("marker-phase.json", "marker-phase", setitem(MAIN + ("markers", "phase"), [4]), None),
    ("marker-phase-times.json", "marker-phase", setitem(MAIN + ("markers", "endTime"), [None]), None),
    ("unique-string-as-text.json", "unique-string", unique_string_as_text, None),
    ("gc-cause-string.json", "marker-cause", gc_cause_string, None),
    ("address-null.json", "null-convention", setitem(("shared", "frameTable", "address"), [-1, None, -1]), None),
    ("resource-null.json", "null-convention", setitem(("shared", "funcTable", "resource"), [0, 0, None]), None),
    ("native-symbol-minus-one.json", "null-convention", setitem(("shared", "frameTable", "nativeSymbol"), [None, -1, None]), None),
    ("source-minus-one.json", "null-convention", setitem(("shared", "funcTable", "source"), [0, 0, -1]), None),
    ("version-75.json", "version", setitem(("meta", "preprocessedProfileVersion"), 75), None),
    ("no-marker-schema.json", "missing", delitem(("meta", "markerSchema")), None),
    ("cpu-delta-length.json", "cpu-delta", setitem(MAIN + ("samples", "threadCPUDelta"), [0, 1, 2]), None),
    ("cpu-unit-greek-mu.json", "cpu-delta", setitem(("meta", "sampleUnits", "threadCPUDelta"), "\u03bcs"), None),
    ("pid-number.json", "pid", setitem(MAIN + ("pid",), 12345), None),
    ("pid-dash.json", "pid", setitem(MAIN + ("pid",), "12-345"), None),
    ("no-threads.json", "threads-empty", no_threads, None),
    ("visible-thread-missing.json", "visible-threads", setitem(("meta", "initialVisibleThreads"), [0, 2]), None),
    ("weight-length.json", "weight", setitem(MAIN + ("samples", "weight"), [1, 1]), None),
    # Profile Info's total (issue 30) says 7 CPU samples; the file holds 6
    ("totals.json", "totals", setitem(("meta", "extra"), [{"label": "Samples in this file", "entries": [
        {"label": "CPU samples (weight; [idle] apart)", "format": "integer", "value": 7}]}]), None),
    ("nan.json", "json", setitem(MAIN + ("samples", "threadCPUDelta", 1), float("nan")), None),
]


def main():
    out = os.path.join(HERE, "bad")
    lines = ["# file rule  (generated by make_bad_profiles.py; fxcheck must exit 1 naming the rule)"]
    for name, rule, mutate, raw in CASES:
        p = copy.deepcopy(GOOD)
        mutate(p)
        data = json.dumps(p, ensure_ascii=False, indent=1).encode("utf-8")
        if raw is not None:
            data = data.replace(b"@@BAD@@", raw)
        with open(os.path.join(out, name), "wb") as f:
            f.write(data + b"\n")
        lines.append(f"{name} {rule}")
    with open(os.path.join(out, "expected.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
