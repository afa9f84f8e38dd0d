#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a demo profile against the demo's truth table (java-test/demo/Demo.java).

Reads, from the run directory of demo_test.sh:
  fxcheck-summary.json        fxcheck --summary-json of the profile
  pcli-threads.json           profiler-cli thread list --json
  pcli-functions-<name>.json  profiler-cli thread functions --include-idle --limit 0 --json
  pcli-samples-<name>.json    profiler-cli thread samples --include-idle --json
  demo.out                    the demo's stdout (its own CPU split, quoted for comparison)
and writes shares.json. Every failed assertion prints the measured values; the exit status is
the number of failures (capped at 100).

Tolerance for the 50/30/20 split of worker-1 (cpu and itimer modes): +-7 percentage points.
A 3 s run at 10 ms gives about 300 worker-1 samples. If every sample were an independent draw,
the standard deviation of a share would be sqrt(p(1-p)/n): 2.9 pp for alpha (p=0.5), 2.6 pp for
beta, 2.3 pp for gamma, so 7 pp is 2.4 to 3 standard deviations. The timer samples at a fixed
CPU interval (quantised to the kernel's 4 ms tick), i.e. systematic sampling of a cycle whose
length is randomised, which varies less than independent draws; 7 pp leaves room for the tick
quantisation and the first cycles run in the interpreter. The shares are taken among the samples
in alpha, beta or gamma; a separate assertion requires those to be most of worker-1's samples
outside the Idle category (the agent adds Idle samples for the time a thread was off CPU).
"""
import argparse
import os
import re
import sys

from profile_lib import (Checker, fx_total, idle_samples, load_json as load, pcli_total,
                         workload_split)

TRUTH = {"alpha": 50.0, "beta": 30.0, "gamma": 20.0}
TOLERANCE_PP = 7.0
MIN_WORKER1_SAMPLES = 150  # below this the tolerance above means little
MIN_COVERAGE = 0.85  # alpha+beta+gamma among all of worker-1's samples
MIN_HASHING = 0.80
MIN_MAIN_WAITING = 0.70  # wall mode: main joins the workers; start-up runs before that
THREADS = ("worker-1", "worker-2", "main")
# Frames of a thread that waits: Thread.join and what it calls on every JDK (wait/wait0/park),
# and sleeping.
WAIT_FUNCS = re.compile(
    r"(^|\.)(Thread\.(join|sleep|sleep0|sleepNanos|sleepNanos0)|Object\.(wait|wait0)"
    r"|LockSupport\.park\w*|Unsafe\.park)(\(|$)")

def method_re(method):
    return re.compile(r"(^|\.)Demo\." + method + r"(\(|$)")


def pct(part, whole):
    return 100.0 * part / whole if whole else 0.0


def demo_truth(run):
    return workload_split(run, "demo.out", r"alpha ([\d.]+)% beta ([\d.]+)% gamma ([\d.]+)%")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--mode", required=True, choices=["cpu", "itimer", "wall"])
    ap.add_argument("--label", default="demo")
    a = ap.parse_args()
    run, label = a.run, a.label
    ck = Checker()
    check = ck.check

    summary = load(os.path.join(run, "fxcheck-summary.json"))
    pthreads = load(os.path.join(run, "pcli-threads.json"))["threads"]
    fx = {}
    for name in THREADS:
        found = [t for t in summary["threads"] if t.get("name") == name]
        check(len(found) >= 1, f"fxcheck: no thread named {name!r}; threads: "
              f"{[t.get('name') for t in summary['threads']]}")
        check(len(found) <= 1, f"fxcheck: {len(found)} threads named {name!r}")
        if found:
            fx[name] = found[0]
        pfound = [t for t in pthreads if t.get("name") == name]
        check(len(pfound) == 1, f"profiler-cli: {len(pfound)} threads named {name!r}; threads: "
              f"{[t.get('name') for t in pthreads]}")
    if ck.failures:
        return ck.write(os.path.join(run, "shares.json"), {})

    pfun = {n: load(os.path.join(run, f"pcli-functions-{n}.json")) for n in THREADS}
    psam = {n: load(os.path.join(run, f"pcli-samples-{n}.json")) for n in THREADS}
    result = {"mode": a.mode, "threads": {}}
    # Samples in the Idle category are the agent's synthetic "the thread was off CPU" samples
    # (PROFILE-FORMAT.md §11.3) or waiting states; the shares are taken among the others.
    busy = {}
    for n in THREADS:
        s = fx[n]["weightedSamples"]
        p = psam[n]["categoryBreakdown"]["totalSamples"]
        idle = idle_samples(psam[n])
        busy[n] = s - idle
        result["threads"][n] = {"samples": s, "idle": idle}
        print(f"{label}: thread {n}: {s:g} samples (profiler-cli: {p:g}), {idle:g} of them Idle, "
              f"CPU {fx[n]['cpuDeltaSum'] / 1e6:.0f} ms")
        check(s == p, f"{n}: fxcheck counts {s:g} samples, profiler-cli {p:g}")
    for n in ("worker-1", "worker-2"):
        check(busy[n] > 0, f"{n} has no samples outside the Idle category in {a.mode} mode")

    # worker-1: alpha/beta/gamma, from both readers, which must agree exactly.
    w1 = fx["worker-1"]
    counts = {}
    for m in TRUTH:
        c_fx = fx_total(w1["funcs"], method_re(m))
        c_pc = pcli_total(pfun["worker-1"]["functions"], method_re(m))
        check(c_fx == c_pc, f"worker-1 Demo.{m}: fxcheck total {c_fx:g}, profiler-cli {c_pc:g}")
        counts[m] = c_fx
    inside = sum(counts.values())
    shares = {m: pct(counts[m], inside) for m in TRUTH}
    coverage = inside / busy["worker-1"] if busy["worker-1"] else 0.0
    truth = demo_truth(run)
    print(f"{label}: worker-1 measured shares: alpha {shares['alpha']:.1f}% beta "
          f"{shares['beta']:.1f}% gamma {shares['gamma']:.1f}% of {inside:g} samples in them "
          f"({100 * coverage:.1f}% of the thread's {busy['worker-1']:g} non-idle samples); "
          f"truth 50/30/20"
          + (f", demo's own CPU split {truth[0]}/{truth[1]}/{truth[2]}" if truth else ""))
    w2 = fx["worker-2"]
    hashing = fx_total(w2["funcs"], method_re("hashing"))
    hashing_pc = pcli_total(pfun["worker-2"]["functions"], method_re("hashing"))
    check(hashing == hashing_pc,
          f"worker-2 Demo.hashing: fxcheck total {hashing:g}, profiler-cli {hashing_pc:g}")
    hashing_share = hashing / busy["worker-2"] if busy["worker-2"] else 0.0
    print(f"{label}: worker-2 measured share: hashing {100 * hashing_share:.1f}% of "
          f"{busy['worker-2']:g} non-idle samples; truth 100%")
    result["worker1"] = {"counts": counts, "shares_pct": shares, "coverage": coverage,
                         "demo_cpu_split_pct": truth}
    result["worker2"] = {"hashing": hashing, "share": hashing_share}

    if a.mode in ("cpu", "itimer"):
        check(inside >= MIN_WORKER1_SAMPLES,
              f"worker-1 has {inside:g} samples in alpha/beta/gamma, need >= "
              f"{MIN_WORKER1_SAMPLES} for a +-{TOLERANCE_PP:g} pp tolerance")
        check(coverage >= MIN_COVERAGE,
              f"worker-1: alpha+beta+gamma cover {100 * coverage:.1f}% of its samples, need >= "
              f"{100 * MIN_COVERAGE:.0f}%; top funcs: {top(w1['funcs'])}")
        for m, want in TRUTH.items():
            check(abs(shares[m] - want) <= TOLERANCE_PP,
                  f"worker-1 Demo.{m}: {shares[m]:.1f}% of alpha+beta+gamma samples, truth "
                  f"{want:g}% +- {TOLERANCE_PP:g} pp (counts {counts})")
        check(hashing_share >= MIN_HASHING,
              f"worker-2 Demo.hashing: {100 * hashing_share:.1f}% of its "
              f"{busy['worker-2']:g} non-idle samples, need >= {100 * MIN_HASHING:.0f}%; top funcs: "
              f"{top(w2['funcs'])}")
    else:
        main_t = fx["main"]
        n_main = main_t["weightedSamples"]
        check(n_main > 0, "wall mode: main has no samples")
        idle = result["threads"]["main"]["idle"]
        waiting = max([f["total"] for f in main_t["funcs"] if WAIT_FUNCS.search(f["name"])],
                      default=0)
        # A sample is waiting if its category is Idle or a waiting method is on its stack;
        # the larger of the two counts is a lower bound of their union.
        share = max(idle, waiting) / n_main if n_main else 0.0
        print(f"{label}: main: {n_main:g} samples, {idle:g} in the Idle category, {waiting:g} "
              f"with a waiting method on the stack ({100 * share:.1f}% waiting)")
        result["main"] = {"samples": n_main, "idle": idle, "waiting": waiting, "share": share}
        check(share >= MIN_MAIN_WAITING,
              f"wall mode: main waits in {100 * share:.1f}% of its {n_main:g} samples, need >= "
              f"{100 * MIN_MAIN_WAITING:.0f}%; top funcs: {top(main_t['funcs'])}")
    return ck.write(os.path.join(run, "shares.json"), result)


def top(funcs, n=6):
    return ", ".join(f"{f['name']} {f['total']:g}/{f['self']:g}" for f in funcs[:n])


if __name__ == "__main__":
    sys.exit(main())
