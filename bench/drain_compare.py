#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Does a drain change leave the profile as it was? (docs/BENCHMARKS.md "The drain's passes
(session 16)"). Per profile (e.g. drain_cost.py's r*-NAME-JDK.json.gz, two builds of one
workload): the figures a drain or code-map change could move, each per 1,000 samples where it
counts per sample. Two runs of a sampler never give one profile; what must hold is that the
builds' rows differ no more than two runs of one build do.
Then the stacks: each profile's samples by the category and subcategory of their leaf frame
(Java: interpreted, C1, C2, inlined, recovered...; native, kernel, GC, JIT compiler), and by the
function they are in (self, over every thread: fxprof summary --json --top 100000); for each, the
total variation distance between each two profiles' shares (0: the same split, 100: nothing in
common), so base-new can be read against base-base.
usage: drain_compare.py FXPROF PROFILE.json.gz [PROFILE.json.gz]..."""
import gzip
import json
import subprocess
import sys

# (column, meta.extra label, per 1,000 samples?)
FIGURES = [("JIT markers", "JIT markers", False),
           ("GC pauses", "GC pauses", False),
           ("ASGCT Java", "Java stack", True),
           ("recovered", "recovered stacks", True),
           ("no range", "not recovered: pc in no known code range", True),
           ("heap pcs", "pcs found in the code heaps (compiled since the table)", True),
           ("heap refused", "code heap lookups refused past a sample's budget (24)", True),
           ("typed", "samples with types", True),
           ("types cut", "walks stopped: a method maybe inlined into itself", True),
           ("untyped fr", "frames untyped", True),
           ("native fr", "native frames", True),
           ("to Java", "walk stopped: reached Java code (anonymous executable memory: the code cache)",
            True),
           ("below", "samples walked below the Java frames", True),
           ("compiling", "compiling: method read", True)]


def extra_of(doc):
    out = {}
    for g in doc["meta"].get("extra", []):
        for e in g.get("entries", []):
            out.setdefault(e["label"], e["value"])
    return out


def losses_of(doc):
    """Every group's "losses" line that is not "none", and each ring's drops."""
    out = []
    for g in doc["meta"].get("extra", []):
        for e in g.get("entries", []):
            if (e["label"] == "losses" and e["value"] != "none") or \
                    e["label"].startswith("ring drops"):
                out.append(f"{g.get('label', '?')}: {e['label']} {e['value']}")
    return out


def leaf_shares(doc):
    cats = doc["meta"]["categories"]
    ft, st = doc["shared"]["frameTable"], doc["shared"]["stackTable"]
    by = {}
    for t in doc["threads"]:
        sm = t["samples"]
        for i, stack in enumerate(sm["stack"]):
            if stack is None:
                continue
            f = st["frame"][stack]
            c, sub = ft["category"][f], ft["subcategory"][f]
            key = f"{cats[c]['name']}/{cats[c]['subcategories'][sub]}"
            w = sm["weight"][i] if sm.get("weight") else 1
            by[key] = by.get(key, 0) + w
    total = sum(by.values()) or 1
    return {k: v / total for k, v in by.items()}


def distances(title, paths, shares):
    print(f"\n{title}: total variation distance, %")
    for i, a in enumerate(paths):
        row = []
        for b in shares:
            keys = set(shares[i]) | set(b)
            row.append(f"{50 * sum(abs(shares[i].get(k, 0) - b.get(k, 0)) for k in keys):.1f}")
        print(f"{i} {a.rsplit('/', 1)[-1]} | " + " | ".join(row))


def self_shares(fxprof, path):
    out = subprocess.run([fxprof, "summary", path, "--json", "--top", "100000"],
                         capture_output=True, text=True, check=True).stdout
    by = {}
    for t in json.loads(out)["threads"]:
        for f in t["self"]:
            by[f["name"]] = by.get(f["name"], 0) + f["samples"]
    total = sum(by.values()) or 1
    return {k: v / total for k, v in by.items()}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.splitlines()[-1])
    fxprof, paths = sys.argv[1], sys.argv[2:]
    print("profile | samples | " + " | ".join(c for c, _, _ in FIGURES) + " | losses")
    leaves = []
    for path in paths:
        with gzip.open(path) as f:
            doc = json.load(f)
        leaves.append(leaf_shares(doc))
        ex = extra_of(doc)
        n = int(ex.get("samples taken (rows drained from the rings)", 0)) or 1
        cols = []
        for _, label, per in FIGURES:
            v = ex.get(label, "-")
            cols.append(f"{1000 * float(v) / n:.0f}" if per and v != "-" else str(v))
        losses = losses_of(doc)
        print(f"{path.rsplit('/', 1)[-1]} | {n} | " + " | ".join(cols) + " | "
              + (", ".join(losses) or "none"))
    distances("samples by their leaf's category/subcategory", paths, leaves)
    distances("self samples by function", paths, [self_shares(fxprof, p) for p in paths])

if __name__ == "__main__":
    main()
