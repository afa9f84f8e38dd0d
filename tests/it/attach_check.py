#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a ServerWorkload profile through fxcheck's --summary-json: the request threads
(request-worker-N) have samples, and the hot method is on the stack of at least half of their
busy samples (those not in [idle] or parked); it takes ~95 % of them when it is not inlined,
which the tests ensure (attach_lib.sh).

usage: attach_check.py SUMMARY.json HOT_METHOD
"""
import collections
import sys

from profile_lib import Checker, load_json


def main():
    summary, hot = sys.argv[1], sys.argv[2]
    ck = Checker(summary)
    doc = load_json(summary)
    workers = [t for t in doc["threads"] if t["name"].startswith("request-worker-")]
    sampled = [t for t in workers if t["samples"] > 0]
    if not sampled:
        ck.fatal(f"no request-worker thread has samples "
                 f"(threads: {[t['name'] for t in doc['threads']]})")
    busy = hot_total = 0
    self_samples = collections.Counter()
    for t in sampled:
        idle = 0
        for fn in t["funcs"]:
            name = fn["name"]
            if name.startswith("[idle]") or name.startswith("[state:") or "park" in name.lower():
                idle += fn["self"]
            elif not name.startswith("["):
                self_samples[name] += fn["self"]
            if name == hot:
                hot_total += fn["total"]
        # weighted: the inserted [idle] gap samples weigh 0 (their count is in "samples")
        busy += t.get("weightedSamples", t["samples"]) - idle
    top = self_samples.most_common(3)
    print(f"{summary}: {busy} busy samples on {len(sampled)} request threads; "
          f"{hot} on the stack of {hot_total}; top self: {top}")
    ck.check(busy > 0 and hot_total * 2 >= busy,
             f"{hot} is on {hot_total} of {busy} busy samples (< 50 %)")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
