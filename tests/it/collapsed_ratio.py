#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""async-profiler's test assertions on fxagent's collapsed output (issue 32: its stack tests'
cases, docs/VALIDATION.md section 9): the share of samples whose stack line matches a regex, as
its Output.ratio computes it (each "root;...;leaf COUNT" line weighs COUNT; a line matches when
the regex is found anywhere in it; the share is of all the samples of the file, every thread).

usage: collapsed_ratio.py --label NAME FILE [--min REGEX SHARE]... [--max REGEX SHARE]...
  --min  the share must be greater than SHARE (async-profiler's Assert.isGreater)
  --max  the share must be less than SHARE (Assert.isLess)
Prints every share; exits with the number of bounds missed (1 with no sample at all).
"""
import argparse
import re
import sys


def shares(path):
    """The (stack, count) lines of a collapsed file."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            stack, _, count = line.rpartition(" ")
            if stack and count.isdigit():
                rows.append((line, int(count)))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="collapsed_ratio")
    ap.add_argument("file")
    ap.add_argument("--min", nargs=2, action="append", default=[], metavar=("REGEX", "SHARE"))
    ap.add_argument("--max", nargs=2, action="append", default=[], metavar=("REGEX", "SHARE"))
    a = ap.parse_args()
    rows = shares(a.file)
    total = sum(n for _, n in rows)
    if total == 0:
        print(f"{a.label}: FAIL: no samples in {a.file}")
        return 1
    missed = 0
    for kind, bounds in (("min", a.min), ("max", a.max)):
        for regex, bound in bounds:
            rx = re.compile(regex)
            got = sum(n for line, n in rows if rx.search(line)) / total
            ok = got > float(bound) if kind == "min" else got < float(bound)
            missed += not ok
            rel = ">" if kind == "min" else "<"
            print(f"{a.label}: {'ok' if ok else 'FAIL'}: ratio('{regex}') = {got:.4f} "
                  f"(of {total} samples), must be {rel} {bound}")
    return min(missed, 100)


if __name__ == "__main__":
    sys.exit(main())
