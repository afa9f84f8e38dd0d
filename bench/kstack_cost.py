#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Kernel frames' cost (issue 16, kstack=yes; docs/BENCHMARKS.md "Kernel frames").

usage: bench/kstack_cost.py --agent libfxagent.so --jar fxagent-mixed.jar --jdk JDK_HOME
                            [--pairs N] [--seconds S] [--out DIR]
The `devnull` workload of java-test/mixed (one thread writing one byte per write(2) to
/dev/null, so most samples have kernel frames) runs S seconds per JVM, in interleaved rounds:
  handler: interval=1ms with kstack=yes and kstack=no; each profile's meta.extra "Sampling"
           gives the handler's mean CPU ns per signal (timed on 1 signal in 16) and the count of
           timed signals;
  overhead: no agent, mode=cpu interval=10ms kstack=yes, and kstack=no; the workload's own
           count of writes in S seconds (its throughput) against no agent's in the same round.
Prints the medians (and ranges) as Markdown tables.
"""
import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import tempfile


def run(a, opts, out):
    cmd = [os.path.join(a.jdk, "bin", "java")]
    if opts is not None:
        cmd.append(f"-agentpath:{a.agent}=mode=cpu,quiet,file={out}{',' + opts if opts else ''}")
    cmd += ["-jar", a.jar, "devnull", str(a.seconds)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    m = re.search(r"writes=(\d+)", p.stdout)
    return int(m.group(1)) if m else None


def sampling(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    for g in doc["meta"].get("extra", []):
        if g["label"] == "Sampling":
            return {e["label"]: e["value"] for e in g["entries"]}
    return {}


def med(xs):
    return f"{statistics.median(xs):.0f} ({min(xs):.0f}-{max(xs):.0f})" if xs else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--jar", required=True)
    ap.add_argument("--jdk", required=True)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--out")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="fxbench-kstack.")
    os.makedirs(out, exist_ok=True)
    cost = {"yes": [], "no": []}
    timed = {"yes": [], "no": []}
    tput = {"none": [], "yes": [], "no": []}
    for r in range(a.pairs):
        order = ["yes", "no"] if r % 2 == 0 else ["no", "yes"]
        for k in order:
            prof = os.path.join(out, f"h-{k}-{r}.json.gz")
            run(a, f"interval=1ms,kstack={k}", prof)
            s = sampling(prof)
            cost[k].append(float(s.get("mean CPU ns in handler per signal", 0)))
            timed[k].append(float(s.get("signals whose handler CPU time was measured", 0)))
        for k in (["none", "yes", "no"] if r % 2 == 0 else ["no", "yes", "none"]):
            prof = os.path.join(out, f"o-{k}-{r}.json.gz")
            w = run(a, None if k == "none" else f"interval=10ms,kstack={k}", prof)
            tput[k].append(w)
        print(f"round {r}: handler ns yes={cost['yes'][-1]:.0f} no={cost['no'][-1]:.0f}; "
              f"writes none={tput['none'][-1]} yes={tput['yes'][-1]} no={tput['no'][-1]}", flush=True)
    print("\n| interval 1 ms, devnull | kstack=yes | kstack=no |\n| --- | ---: | ---: |")
    print(f"| handler CPU ns per signal, median (min-max of runs) | {med(cost['yes'])} | {med(cost['no'])} |")
    print(f"| timed signals per run, median | {med(timed['yes'])} | {med(timed['no'])} |")
    rel = {k: [w / n for w, n in zip(tput[k], tput["none"])] for k in ("yes", "no")}
    print("\n| interval 10 ms, devnull | no agent | kstack=yes | kstack=no |\n| --- | ---: | ---: | ---: |")
    print(f"| writes in {a.seconds} s, median (min-max) | {med(tput['none'])} | {med(tput['yes'])} | {med(tput['no'])} |")
    print("| throughput against no agent in the same round, median (min-max) | 1 | "
          + " | ".join(f"{statistics.median(rel[k]):.3f} ({min(rel[k]):.3f}-{max(rel[k]):.3f})"
                       for k in ("yes", "no")) + " |")
    print(f"\nprofiles in {out}")


if __name__ == "__main__":
    main()
