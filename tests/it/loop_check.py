#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that periodic profiles do not overlap: in wall-clock time (meta.startTime plus sample
times), every sample of file k comes after every sample of file k-1, and each file's samples lie
in its own profiling range. Only the last file (stop, exit) may be empty. Prints each file's
range.

usage: loop_check.py FILE1.json.gz FILE2.json.gz ...   (in sequence order)
"""
import gzip
import itertools
import sys


def load(path):
    import json
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def sample_range(doc):
    first, last = None, None
    for t in doc["threads"]:
        deltas = t["samples"].get("timeDeltas") or []
        if not deltas:
            continue
        times = list(itertools.accumulate(deltas))
        first = times[0] if first is None else min(first, times[0])
        last = times[-1] if last is None else max(last, times[-1])
    return first, last


def main():
    prev_last, prev_name = None, None
    for path in sys.argv[1:]:
        doc = load(path)
        meta = doc["meta"]
        t0 = meta["startTime"]
        first, last = sample_range(doc)
        if first is None and path == sys.argv[-1]:
            print(f"{path}: no samples (the end came right after the last period)")
            continue
        if first is None:
            sys.exit(f"{path}: no samples")
        begin = meta.get("profilingStartTime", 0)
        end = meta.get("profilingEndTime", last)
        print(f"{path}: samples {t0 + first:.1f} .. {t0 + last:.1f} (epoch ms), "
              f"range {begin:.1f} .. {end:.1f} ms after its start")
        if first < begin - 1 or last > end + 1:
            sys.exit(f"{path}: samples {first:.1f}..{last:.1f} outside its range {begin}..{end}")
        if prev_last is not None and t0 + first < prev_last - 1:
            sys.exit(f"{path}: its first sample ({t0 + first:.1f}) is before the last of "
                     f"{prev_name} ({prev_last:.1f}): the periods overlap")
        prev_last, prev_name = t0 + last, path


if __name__ == "__main__":
    main()
