#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a profile's fxcheck --summary-json for the fault and stress tests.

usage: stress_check.py SUMMARY.json [FUNC|ALT...] [--threads PREFIX MIN]
Each FUNC argument ("a|b" accepts either name) must be on the stack (total > 0) of some thread.
--threads PREFIX MIN: at least MIN threads whose name starts with PREFIX have samples.
Prints the sample count, the thread count and, per FUNC, the samples it is on.
"""
import json
import sys


def main():
    args = sys.argv[2:]
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    threads = doc["threads"]
    total = sum(t["samples"] for t in threads)
    print(f"{total} samples in {len(threads)} threads")
    bad = []
    i = 0
    while i < len(args):
        if args[i] == "--threads":
            prefix, want = args[i + 1], int(args[i + 2])
            got = sum(1 for t in threads if t["name"].startswith(prefix) and t["samples"] > 0)
            print(f"threads '{prefix}*' with samples: {got} (need {want})")
            if got < want:
                bad.append(f"{got} threads '{prefix}*' with samples, need {want}")
            i += 3
            continue
        names = args[i].split("|")
        on = {n: sum(fn["total"] for t in threads for fn in t["funcs"] if fn["name"] == n)
              for n in names}
        print(f"on the stack of: {on}")
        if not any(on.values()):
            bad.append(f"none of {names} has samples")
        i += 1
    if bad:
        sys.exit("; ".join(bad))


if __name__ == "__main__":
    main()
