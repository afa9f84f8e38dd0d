#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks an InlineSplit profile (java-test/inline) against the split the workload measured.

Reads, from the run directory of inline_split_test.sh:
  inline.out               the workload's stdout: "inline-split: ... hot H% sibling S% ..."
  fxcheck-summary.json     fxcheck --summary-json of the profile
  pcli-functions.json      profiler-cli thread functions --include-idle --limit 0 --json
  pcli-samples.json        profiler-cli thread samples --include-idle --json
of thread "inline-worker", and writes split.json. The exit status is the number of failures.

The measured share is hot / (hot + sibling) over the samples whose stack holds either method
(fxcheck and profiler-cli must count the same), against H, the CPU clock's share of hot in the
time spent in the two (about 77 %).

  nodns    |measured - H| <= 10 points. A 4 s run at 10 ms gives about 330 samples in hot and
           sibling; as independent draws a share near 0.77 has a standard deviation of 2.3
           points. The measurement is biased too: runs on JDK 17 and 25 measured H + 0.6 to
           H + 6.1, probably because the clock read that ends sibling's measurement is charged to sibling
           by the clock but sampled in the clock's own frames. 10 points leaves 4 above the
           largest seen; the defect below put hot 49 or more points under H.
  default  measured <= H - 30 points: the HotSpot defect of docs/VALIDATION.md section 4.5 still
           shows (runs on JDK 17 and 25 measured 10 to 28 % against H = 77 %). When a JDK fixes
           it, this fails: update section 4.5 and the docs' advice, then this expectation.

Both also require enough samples (>= 150 in hot + sibling) and that hot + sibling cover most of
the thread's non-idle samples (>= 70 %), so a profile that lost the methods cannot pass.
"""
import argparse
import os
import re
import sys

from profile_lib import (Checker, fx_total, idle_samples, load_json as load, pcli_total,
                         workload_split)

NODNS_TOLERANCE_PP = 10.0
DEFECT_MIN_GAP_PP = 30.0
MIN_SAMPLES = 150
MIN_COVERAGE = 0.70
THREAD = "inline-worker"

def method_re(method):
    return re.compile(r"(^|\.)InlineSplit\." + method + r"(\(|$)")


def truth(run):
    split = workload_split(run, "inline.out", r"hot ([\d.]+)% sibling ([\d.]+)%")
    return split[0] if split else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--config", required=True, choices=["default", "nodns"])
    ap.add_argument("--label", default="inline_split")
    a = ap.parse_args()
    run, label = a.run, a.label
    ck = Checker()
    check = ck.check
    result = {"config": a.config}

    h_cpu = truth(run)
    check(h_cpu is not None, "no 'inline-split: ... hot H% sibling S%' line in inline.out")
    threads = [t for t in load(os.path.join(run, "fxcheck-summary.json"))["threads"]
               if t.get("name") == THREAD]
    check(len(threads) == 1, f"fxcheck: {len(threads)} threads named {THREAD!r}")
    if ck.failures:
        return ck.write(os.path.join(run, "split.json"), result)
    t = threads[0]
    pfun = load(os.path.join(run, "pcli-functions.json"))["functions"]
    psam = load(os.path.join(run, "pcli-samples.json"))

    counts = {}
    for m in ("hot", "sibling"):
        c_fx = fx_total(t["funcs"], method_re(m))
        c_pc = pcli_total(pfun, method_re(m))
        check(c_fx == c_pc, f"InlineSplit.{m}: fxcheck total {c_fx:g}, profiler-cli {c_pc:g}")
        counts[m] = c_fx
    inside = counts["hot"] + counts["sibling"]
    busy = t["weightedSamples"] - idle_samples(psam)
    coverage = inside / busy if busy > 0 else 0.0
    share = 100.0 * counts["hot"] / inside if inside else 0.0
    print(f"{label}: hot {counts['hot']:g} sibling {counts['sibling']:g} samples: hot "
          f"{share:.1f}% of them (CPU clock: {h_cpu:.1f}%); they are {100 * coverage:.1f}% of the "
          f"thread's {busy:g} non-idle samples")
    result.update({"counts": counts, "hot_share_pct": share, "cpu_clock_hot_pct": h_cpu,
                   "coverage": coverage})

    check(inside >= MIN_SAMPLES, f"{inside:g} samples in hot and sibling, need >= {MIN_SAMPLES}")
    check(coverage >= MIN_COVERAGE, f"hot and sibling cover {100 * coverage:.1f}% of the "
          f"thread's non-idle samples, need >= {100 * MIN_COVERAGE:.0f}%")
    if a.config == "nodns":
        check(abs(share - h_cpu) <= NODNS_TOLERANCE_PP,
              f"with -XX:-DebugNonSafepoints hot has {share:.1f}% of the samples, its CPU share is "
              f"{h_cpu:.1f}% +- {NODNS_TOLERANCE_PP:g} points")
    else:
        check(share <= h_cpu - DEFECT_MIN_GAP_PP,
              f"with the default configuration hot has {share:.1f}% of the samples, within "
              f"{DEFECT_MIN_GAP_PP:g} points of its CPU share {h_cpu:.1f}%: the HotSpot defect of "
              f"docs/VALIDATION.md section 4.5 no longer shows on this JDK (or the workload no "
              f"longer triggers it); update section 4.5 and this expectation")
    return ck.write(os.path.join(run, "split.json"), result)


if __name__ == "__main__":
    sys.exit(main())
