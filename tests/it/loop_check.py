#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that periodic profiles do not overlap: in wall-clock time (meta.startTime plus sample
times), every sample of file k comes after every sample of file k-1, and each file's samples lie
in its own profiling range. Only the last file (stop, exit) may be empty. Prints each file's
range. Each reset rebuilds the interned tables (docs/PRODUCTION.md, "Memory"): file k reports at
least k-1 rebuilds, no "[stack table full]" sample, and its stack table holds (nearly) only the
stacks its own samples reach, not every stack of the earlier periods. Every file reports the
drain thread's CPU time, never less than the file before's.

usage: loop_check.py FILE1.json.gz FILE2.json.gz ...   (in sequence order)
"""
import itertools
import sys

from profile_lib import Checker, extra_entries, load_profile

CK = Checker()


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


def memory_extra(doc, label):
    for group, e in extra_entries(doc):
        if group == "Memory bound" and e["label"].startswith(label):
            return e["value"]
    return None


def unreached_stacks(doc):
    """Stacks that no sample reaches (as itself or as a prefix of its stack)."""
    offsets = doc["shared"]["stackTable"]["prefixOffset"]  # 0: root, else parent i - offset
    prefix = [i - o if o else None for i, o in enumerate(offsets)]
    reached = [False] * len(prefix)
    for t in doc["threads"]:
        for s in t["samples"]["stack"]:
            while s is not None and not reached[s]:
                reached[s] = True
                s = prefix[s]
    return reached.count(False)


def check_tables(path, k, doc):
    rebuilt = memory_extra(doc, "tables rebuilt at period resets")
    full = memory_extra(doc, "samples with [stack table full]") or 0  # a loss at 0 has no row
    unreached = unreached_stacks(doc)
    print(f"{path}: tables rebuilt {rebuilt} times, {unreached} stacks no sample reaches")
    if rebuilt is None or rebuilt < k - 1:
        CK.fatal(f"{path}: file {k} of a loop reports {rebuilt} table rebuilds (want >= {k - 1})")
    if full != 0:
        CK.fatal(f"{path}: {full} samples with [stack table full]")
    # After a rebuild only the "[stack table full]" pseudo-stack is interned without a sample.
    if k > 1 and unreached > 2:
        CK.fatal(f"{path}: {unreached} stacks that no sample reaches: earlier periods' stacks "
                 "were kept")


DRAIN_CPU = "drain thread CPU time (since it started, at its last pass)"


def drain_cpu_ms(path, doc, prev):
    """The drain's own CPU, read where each file is written (the drain serves a period's dump,
    its exit precedes the dump at VM death; issue 31): in every file, positive, and never less
    than the file before's (it counts from the drain thread's start)."""
    v = next((e["value"] for g, e in extra_entries(doc)
              if g == "Sampling" and e["label"] == DRAIN_CPU), None)
    ms = float(v.split()[0]) if isinstance(v, str) and v.endswith(" ms") else None
    print(f"{path}: {DRAIN_CPU}: {v!r}")
    if ms is None or ms <= 0:
        CK.fatal(f"{path}: {DRAIN_CPU} {v!r}: want a positive 'X.XXX ms'")
    if prev is not None and ms < prev:
        CK.fatal(f"{path}: {DRAIN_CPU} {ms} ms is less than the file before's {prev} ms")
    return ms


def main():
    prev_last, prev_name, drain_ms = None, None, None
    for k, path in enumerate(sys.argv[1:], start=1):
        doc = load_profile(path)
        check_tables(path, k, doc)
        drain_ms = drain_cpu_ms(path, doc, drain_ms)
        meta = doc["meta"]
        t0 = meta["startTime"]
        first, last = sample_range(doc)
        if first is None and path == sys.argv[-1]:
            print(f"{path}: no samples (the end came right after the last period)")
            continue
        if first is None:
            CK.fatal(f"{path}: no samples")
        begin = meta.get("profilingStartTime", 0)
        end = meta.get("profilingEndTime", last)
        print(f"{path}: samples {t0 + first:.1f} .. {t0 + last:.1f} (epoch ms), "
              f"range {begin:.1f} .. {end:.1f} ms after its start")
        if first < begin - 1 or last > end + 1:
            CK.fatal(f"{path}: samples {first:.1f}..{last:.1f} outside its range {begin}..{end}")
        if prev_last is not None and t0 + first < prev_last - 1:
            CK.fatal(f"{path}: its first sample ({t0 + first:.1f}) is before the last of "
                     f"{prev_name} ({prev_last:.1f}): the periods overlap")
        prev_last, prev_name = t0 + last, path
    return CK.exit_code()


if __name__ == "__main__":
    sys.exit(main())
