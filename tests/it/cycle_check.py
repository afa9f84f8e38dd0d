#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the profiles of the start/stop cycle test (cycle_test.sh, CycleWorkload.java).

usage: cycle_check.py FILE:PHASE... ; prints one line per failure, exit status = failures.

Each file is one recording, taken while the workload ran PHASE. On the cycle-worker threads:
  * no frame of the other phase's methods (evenHot/evenCold vs oddHot/oddCold): the workload
    switched phase between the two recordings, so such a frame is a sample of the previous
    (or next) recording. But one: a single sample of the other phase between two of this one
    on the same thread is AsyncGetCallTrace naming a method inlined beside the running one
    (JDK 25, once in ~300 recordings), counted and printed; samples of another recording come
    in runs or open the thread's samples; in the first recording (the attach: none came
    before it) a run opening a thread's samples is that misnaming too, at most MAX_AT_ATTACH;
  * the hot method's share among hot + cold samples (truth 75 %, 3 units of work to 1) within
    a bound that follows the sample count: 4 binomial standard deviations, at least 8 pp, for
    recordings with at least MIN_SAMPLES such samples (fewer say nothing and are counted);
  * no sample before the recording's start (a negative time);
  * its figures are its own (issue 23: a start after a stop resets them): the samples in the
    sampler's tracks are meta.extra's "samples" plus "idle samples inserted" (when the memory
    bound dropped none); a lock or idle waits track (weightType tracing-ms) holds its waits, as
    many as "Samples in this file" counts (a run at load 24 had one 1 ms lock wait: 2 samples
    more in the file than the sampler's count); the ASGCT outcomes add up to no more than
    those samples, and at most MAX_DUMPS profiles were written before this one (the test's own
    dumps of this recording).
"""
import math
import sys

from profile_lib import Checker, Profile, extra_groups

TAKEN = "samples taken (rows drained from the rings)"  # meta.extra "Sampling" (drain.c)

TRUTH = 0.75
MIN_SAMPLES = 20
FLOOR_PP = 8.0
MAX_DUMPS = 2
MAX_ISOLATED = 1  # per worker thread and recording: see check_recording()
ISOLATED = [0]
MAX_AT_ATTACH = 4  # in the first recording: see check_recording()
AT_ATTACH = [0]
CK = Checker("cycle_check")


def check_own_figures(path, p):
    """Fails if the profile's meta.extra counts more than this recording. The lock and idle
    waits tracks (weightType tracing-ms, lock= on in every third cycle) hold two samples per
    wait (its start with the stack, its end without), drawn from no ring: "Samples in this
    file" counts their waits; the rings' samples are in the other tracks."""
    ex = extra_groups(p)
    smp = ex.get("Sampling", {})
    waits_tracks = [t for t in p["threads"] if t["samples"].get("weightType") == "tracing-ms"]
    in_file = sum(len(t["samples"]["stack"]) for t in p["threads"] if t not in waits_tracks)
    counted = smp.get(TAKEN, 0) + smp.get("idle samples inserted", 0)
    if ex.get("Memory bound", {}).get("dropped since sampling began", 0) == 0 and counted != in_file:
        CK.fail(f"{path}: meta.extra counts {counted} samples (samples + idle inserted), the "
                   f"sampler's tracks hold {in_file}: figures of another recording")
    in_waits = sum(1 for t in waits_tracks for s in t["samples"]["stack"] if s is not None)
    totals = ex.get("Samples in this file", {})
    waits = totals.get("lock waits", 0) + totals.get("idle waits (waiting for work, not lock waits)", 0)
    if in_waits != waits:
        CK.fail(f"{path}: {len(waits_tracks)} waits tracks hold {in_waits} waits, meta.extra "
                   f"'Samples in this file' counts {waits}")


def leaf_method(prof, stack, cache):
    """The innermost of the four phase methods on this stack, or None."""
    if stack not in cache:
        found = None
        for name in prof.leaf_first(stack):
            for m in ("evenHot", "evenCold", "oddHot", "oddCold"):
                if name.endswith("CycleWorkload." + m) or ("CycleWorkload." + m + "(") in name:
                    found = m
            if found:
                break
        cache[stack] = found
    return cache[stack]


def check_recording(path, phase):
    prof = Profile(path)
    p = prof.doc
    check_own_figures(path, p)
    mine = "even" if phase % 2 == 0 else "odd"
    other = "odd" if mine == "even" else "even"
    counts = {"Hot": 0, "Cold": 0, "other": 0}
    cache = {}
    isolated = at_attach = most_isolated = 0
    for t in p["threads"]:
        if not t["name"].startswith("cycle-worker-"):
            continue
        smp = t["samples"]
        time = 0.0
        seq = []  # this thread's phase methods, in time order
        for i, stack in enumerate(smp["stack"]):
            time += smp["timeDeltas"][i]
            if i == 0 and time < 0:
                CK.fail(f"{path}: {t['name']}: a sample at {time:.3f} ms, before the start")
            if stack is None:
                continue
            m = leaf_method(prof, stack, cache)
            if m is None:
                continue
            seq.append(m)
            if not m.startswith(other):
                counts[m[len(mine):]] += 1
        thread_isolated = 0
        opening = 0  # the other phase's samples that open this thread's samples
        while opening < len(seq) and seq[opening].startswith(other):
            opening += 1
        for i, m in enumerate(seq):
            if not m.startswith(other):
                continue
            # The first recording is the attach itself: no recording came before it, so a run
            # of the other phase opening a thread's samples is ASGCT naming the neighbour in
            # code compiled before the attach (JDK 25, wall mode: 2 samples 0.1 ms apart, the
            # thread's first, once in a full suite run at load ~14), counted apart.
            if phase == 1 and i < opening:
                at_attach += 1
                continue
            # One sample of the other phase between two of this one on the same thread is
            # AsyncGetCallTrace naming a method inlined beside the running one (see
            # cycle_test.sh); samples of another recording come in runs, or first.
            if 0 < i < len(seq) - 1 and seq[i - 1].startswith(mine) and seq[i + 1].startswith(mine):
                thread_isolated += 1
            else:
                counts["other"] += 1
        # the naming is a property of one thread's compiled loop at one pc: each worker may meet
        # it (session 26, JDK 25, a 1 ms recording of ~2,900 samples: one on each of the two)
        isolated += thread_isolated
        most_isolated = max(most_isolated, thread_isolated)
    ISOLATED[0] += isolated
    AT_ATTACH[0] += at_attach
    if counts["other"] or most_isolated > MAX_ISOLATED or at_attach > MAX_AT_ATTACH:
        CK.fail(f"{path}: phase {phase}: {counts['other'] + isolated + at_attach} samples of "
                f"the {other} methods (another recording's; {isolated} isolated ones, "
                f"at most {MAX_ISOLATED} a thread; {at_attach} opening the first recording, at "
                f"most {MAX_AT_ATTACH})")
    n = counts["Hot"] + counts["Cold"]
    if n >= MIN_SAMPLES:
        share = counts["Hot"] / n
        bound = max(FLOOR_PP / 100, 4 * math.sqrt(TRUTH * (1 - TRUTH) / n))
        if abs(share - TRUTH) > bound:
            CK.fail(f"{path}: phase {phase}: {mine}Hot has {100 * share:.1f} % of {n} "
                       f"samples, truth {100 * TRUTH:.0f} % +- {100 * bound:.1f} pp")
    return n, (counts["Hot"] / n if n else None)


def main():
    small, shares = 0, []
    for arg in sys.argv[1:]:
        path, phase = arg.rsplit(":", 1)
        n, share = check_recording(path, int(phase))
        if n < MIN_SAMPLES:
            small += 1
        elif share is not None:
            shares.append(share)
    if shares:
        dev = max(abs(s - TRUTH) for s in shares)
        mean = sum(shares) / len(shares)
        print(f"cycle_check: {len(sys.argv) - 1} profiles, {len(shares)} with >= {MIN_SAMPLES} "
              f"worker samples: hot share mean {100 * mean:.1f} %, largest deviation "
              f"{100 * dev:.1f} pp; {small} with fewer; {ISOLATED[0]} isolated samples of "
              f"the other phase (ASGCT naming an inlined neighbour), {AT_ATTACH[0]} opening "
              "the first recording (the attach)")
    return CK.exit_code()


if __name__ == "__main__":
    sys.exit(main())
