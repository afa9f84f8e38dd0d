#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a profile's fxcheck --summary-json for the fault and stress tests.

usage: stress_check.py SUMMARY.json [FUNC|ALT...] [--threads PREFIX MIN]
                       [--cpu-covered PREFIX CPU_FILE] [--no-losses]
Each FUNC argument ("a|b" accepts either name) must be on the stack (total > 0) of some thread.
--threads PREFIX MIN: at least MIN threads whose name starts with PREFIX have samples.
--cpu-covered PREFIX CPU_FILE: CPU_FILE has lines "cpu NAME RUN_NS TOTAL_NS LATE_MS" (the
    workload's own CPU time per thread, RUN_NS while the agent's timer was armed; LATE_MS how
    late after the common start the thread began, printed as a figure). Every PREFIX thread with
    RUN_NS >= CPU_BAR has samples, where CPU_BAR is 3 intervals with perf_events (a per-task
    hrtimer) and 3 intervals + 20 ms with timer_create (fires on scheduler ticks, HZ >= 100);
    and the PREFIX threads' sample weight is at least half their RUN_NS in intervals. A thread
    under the bar is one the scheduler hardly ran: no sample is then correct, and it is counted.
--no-losses: the profile (SUMMARY.json without ".summary.json") reports no signal on an
    unregistered thread, perf event not re-armed, timer that failed, or model error, no ring
    drop unless a ring waited between two drains as long as one record an interval takes to
    fill it (a starved drain's, counted: meta.extra "Sampling"), and every other signal handled
    became a sample.
Prints the sample count, the thread count and, per FUNC, the samples it is on.
"""
import re
import sys

from profile_lib import Checker, extra_groups, load_json, load_profile

# meta.extra "Losses" entries that must be 0 (or absent, as every loss count at 0 is): each is a
# sample lost after a timer fired or a thread that could not be sampled (agent/model/drain.c
# report_losses).
LOSS_LABELS = ["ring drops (all threads)", "model errors", "signals on unregistered threads",
               "perf events that could not be re-armed", "threads whose timer failed"]


def profile_of(summary_path):
    return load_profile(summary_path[:-len(".summary.json")])


def ring_fill_ms(profile, sampling):
    """(longest wait of a ring between two drains in ms, the time one thread signalled every
    interval takes to fill the smallest ring in ms), from meta.extra "Sampling" (drain.c), or
    None when the agent did not say."""
    m = re.match(r"(\d+\.\d+) ms$", str(sampling.get("longest time between two drains of a ring", "")))
    cap = sampling.get("records of the largest size the smallest ring holds")
    if m is None or not isinstance(cap, int) or cap <= 0:
        return None
    return float(m.group(1)), cap * float(profile["meta"]["interval"])


def check_losses(profile, ck):
    ex = extra_groups(profile)
    losses, sampling = ex.get("Losses", {}), ex.get("Sampling", {})
    handled, samples = sampling.get("signals handled"), sampling.get("samples taken (rows drained from the rings)")
    drops = 0
    # A ring drops a record only when its thread made more records between two drains (one a
    # sampling interval at most) than the ring holds: a drain starved by 200 busy threads beside
    # another test (CI: 33 passes in 10 s) can let that happen, a loss the agent counts, per
    # thread too. So drops are allowed only when the drain's longest wait was as long as filling
    # the smallest ring takes, and the books below balance; drops without such a wait are a
    # sizing or drain defect.
    fill = ring_fill_ms(profile, sampling)
    passes, meta = sampling.get("drain wake-ups (passes)"), profile["meta"]
    span_ms = meta.get("profilingEndTime", 0) - meta.get("profilingStartTime", 0)
    if fill is None or not isinstance(passes, int):
        ck.fail(f"meta.extra Sampling lacks the drains' longest wait or the ring's size: {sampling}")
        fill = (0.0, 1.0)
    print(f"ring fill: the longest wait of a ring between two drains {fill[0]:.1f} ms "
          f"({passes} passes in {span_ms:.0f} ms); the smallest ring fills in {fill[1]:.1f} ms "
          "at one record an interval")
    # the longest wait is at least the mean one (its figure is read end to end here)
    if fill[0] * (passes + 1) < span_ms * 0.9:
        ck.fail(f"the longest wait {fill[0]:.1f} ms is below the mean of {passes} passes in "
                f"{span_ms:.0f} ms")
    for label in LOSS_LABELS:
        # a loss count at 0 has no row (PROFILE-FORMAT.md, meta.extra): absent is 0 when the
        # group is there
        v = losses.get(label, 0 if losses else None)
        print(f"loss '{label}': {v}")
        if label == "ring drops (all threads)" and isinstance(v, int) and v > 0 \
                and fill[0] >= fill[1]:
            print(f"counted, not failed: {v} ring drops of {handled} signals (a starved drain: "
                  f"a ring waited {fill[0]:.1f} ms, it fills in {fill[1]:.1f} ms)")
            drops = v
        elif v != 0:
            ck.fail(f"loss counter '{label}' is {v}, want 0")
    for label in ["signals after sampling stopped", "threads not sampled"]:
        print(f"counted, not failed: '{label}': {losses.get(label)}")
    print(f"signals handled: {handled}, samples in the model: {samples}, ring drops {drops}")
    if handled is None or samples is None or handled != samples + drops:
        ck.fail(f"{handled} signals handled but {samples} samples and {drops} ring drops: "
                f"records lost on the way")
    # the drain thread's own CPU time (drain.c, issue 31): there, in ms, more than nothing
    drain = str(sampling.get("drain thread CPU time (since it started, at its last pass)", ""))
    print(f"drain thread CPU time: {drain!r}")
    m = re.match(r"(\d+\.\d+) ms$", drain)
    if m is None or float(m.group(1)) <= 0:
        ck.fail(f"drain thread CPU time {drain!r}: want a positive 'X.XXX ms'")
    check_wakeups(profile, sampling, ck)


def check_wakeups(profile, sampling, ck):
    """The drain's wake-ups (issue 31: its period adapts, 10..100 ms, fx_drain_period.h): at
    most one pass per 10 ms deadline (a late drain catches up on the deadlines it missed, no
    more) plus one per request, and at least one; no lower bound from the span: on a loaded
    machine a starved drain ran 7 passes in 10 s, the last drain (VMDeath) not counted."""
    passes = sampling.get("drain wake-ups (passes)")
    slow = sampling.get("drain wake-ups after a wait over 10 ms")
    meta = profile["meta"]
    span_ms = meta.get("profilingEndTime", 0) - meta.get("profilingStartTime", 0)
    print(f"drain wake-ups: {passes} ({slow} after a wait over 10 ms) in {span_ms:.0f} ms")
    if not isinstance(passes, int) or not isinstance(slow, int) or not 0 <= slow <= passes:
        ck.fail(f"drain wake-ups {passes!r}, of them after a slow wait {slow!r}: want counts")
        return
    if passes < 1 or (span_ms > 0 and passes > span_ms / 10 + 50):
        ck.fail(f"{passes} drain wake-ups in {span_ms:.0f} ms: want 1 to one per 10 ms")


def read_cpu(cpu_file, prefix):
    cpu = {}
    with open(cpu_file, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"cpu (\S+) (\d+) (\d+) (\d+)$", line.strip())
            if m and m.group(1).startswith(prefix):
                cpu[m.group(1)] = (int(m.group(2)), int(m.group(3)), int(m.group(4)))
    return cpu


def check_cpu_covered(threads, profile, prefix, cpu_file, ck):
    cpu = read_cpu(cpu_file, prefix)
    if not cpu:
        ck.fail(f"no 'cpu {prefix}*' lines in {cpu_file}")
        return
    interval_ns = float(profile["meta"]["interval"]) * 1e6
    engine = str(extra_groups(profile).get("Sampling", {}).get("engine", ""))
    perf = "perf_events" in engine and "timer_create" not in engine
    bar = 3 * interval_ns + (0 if perf else 20e6)
    weight = {}
    for t in threads:
        idle = sum(fn["total"] for fn in t["funcs"] if fn["name"] == "[idle]")
        weight[t["name"]] = weight.get(t["name"], 0) + t["weightedSamples"] - idle
    over = [n for n, c in cpu.items() if c[0] >= bar]
    missed = sorted((n for n in over if weight.get(n, 0) == 0), key=lambda n: -cpu[n][0])
    under = [n for n in cpu if n not in over]
    under_sampled = sum(1 for n in under if weight.get(n, 0) > 0)
    run_total = sum(c[0] for c in cpu.values())
    lates = sorted(c[2] for c in cpu.values())
    got = sum(weight.get(n, 0) for n in cpu)
    want = run_total / interval_ns
    print(f"engine: {engine}; CPU bar {bar / 1e6:.1f} ms")
    print(f"'{prefix}*' CPU in run(): {run_total / 1e6:.1f} ms in {len(cpu)} threads "
          f"(whole lives: {sum(c[1] for c in cpu.values()) / 1e6:.1f} ms); began after the start: "
          f"median {lates[len(lates) // 2]} ms, max {lates[-1]} ms")
    print(f"threads at or over the bar: {len(over)}, with samples: {len(over) - len(missed)}")
    print(f"threads under the bar (hardly scheduled): {len(under)}, with samples: {under_sampled}, "
          f"max CPU {max((cpu[n][0] for n in under), default=0) / 1e6:.2f} ms")
    print(f"sample weight {got} for {want:.0f} intervals of CPU in run() "
          f"({100 * got / want if want else 0:.1f}%)")
    if not over:
        ck.fail(f"no '{prefix}*' thread ran {bar / 1e6:.1f} ms of CPU: nothing was checked")
    for n in missed:
        ck.fail(f"{n} ran {cpu[n][0] / 1e6:.2f} ms of CPU under the timer but has no sample")
    if got * 2 < want:
        ck.fail(f"sample weight {got} is under half of the {want:.0f} intervals of CPU used")


def main():
    args = sys.argv[2:]
    doc = load_json(sys.argv[1])
    threads = doc["threads"]
    total = sum(t["samples"] for t in threads)
    print(f"{total} samples in {len(threads)} threads")
    ck = Checker()
    i = 0
    while i < len(args):
        if args[i] == "--threads":
            prefix, want = args[i + 1], int(args[i + 2])
            got = sum(1 for t in threads if t["name"].startswith(prefix) and t["samples"] > 0)
            print(f"threads '{prefix}*' with samples: {got} (need {want})")
            if got < want:
                ck.fail(f"{got} threads '{prefix}*' with samples, need {want}")
            i += 3
            continue
        if args[i] == "--cpu-covered":
            check_cpu_covered(threads, profile_of(sys.argv[1]), args[i + 1], args[i + 2], ck)
            i += 3
            continue
        if args[i] == "--no-losses":
            check_losses(profile_of(sys.argv[1]), ck)
            i += 1
            continue
        names = args[i].split("|")
        on = {n: sum(fn["total"] for t in threads for fn in t["funcs"] if fn["name"] == n)
              for n in names}
        print(f"on the stack of: {on}")
        if not any(on.values()):
            ck.fail(f"none of {names} has samples")
        i += 1
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
