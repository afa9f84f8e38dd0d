#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The profiler's marginal overhead: what it costs per unit of work while a JVM runs, without
its one-time costs (start-up, the symbol tables a dump reads once per JVM: kallsyms, the
libraries' ELF symbols). Each workload runs at two sizes (--scales, default 1 and 3 times
overhead.py's work) under no profiler, fxagent and a baseline agent, interleaved round-robin;
per configuration the slope of process CPU against work, (CPU at the large size - CPU at the
small one), over the unprofiled slope is the marginal ratio; the intercept (CPU at the small
size minus the slope's share) is the configuration's one-time cost.
overhead.py's "fixed cost removed" subtracts an empty JVM's run, which does not meet the costs
a real recording meets once (kernel frames make the dump read /proc/kallsyms: ~0.05 s of CPU),
so it overstates short runs' overhead; the slope does not.
usage: bench/marginal_overhead.py --agent SO [--baseline-agent SO] --jar fxagent-bench.jar
           --jdk MAJOR=HOME... [--reps N] [--scales A,B] [--workloads A,B] [--opts OPTS]
           [--other NAME=JVMFLAGS]  (e.g. async-profiler: "ap=-agentpath:.../libasyncProfiler.so=
           start,event=cpu,interval=10ms,file=/dev/null"; flags split on spaces)"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import WORKLOADS, scaled  # noqa: E402  (the same work sizes as overhead.py)


def run(home, agent_flag, workload, args):
    cmd = [os.path.join(home, "bin", "java"), "-Xmx1g"] + agent_flag + [
        "-cp", A.jar, "fxagent.bench." + workload] + args
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"marginal_overhead: {' '.join(cmd)} failed ({status})")
    return ru.ru_utime + ru.ru_stime


def main():
    global A
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agent", required=True)
    ap.add_argument("--baseline-agent")
    ap.add_argument("--jar", required=True)
    ap.add_argument("--jdk", action="append", required=True, help="MAJOR=HOME")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--scales", default="1,3")
    ap.add_argument("--workloads", default="CpuSingle,DeepStack,ManyThreads")
    ap.add_argument("--opts", default="mode=cpu,interval=10ms,quiet")
    ap.add_argument("--other", action="append", default=[], help="NAME=JVMFLAGS")
    A = ap.parse_args()
    s1, s2 = (float(x) for x in A.scales.split(","))
    out = tempfile.mkdtemp(prefix="fxmarginal.")
    configs = {"none": []}
    configs["fxagent"] = [f"-agentpath:{A.agent}={A.opts},file={out}/fx.json.gz"]
    if A.baseline_agent:
        configs["baseline"] = [f"-agentpath:{A.baseline_agent}={A.opts},file={out}/base.json.gz"]
    for other in A.other:
        name, flags = other.split("=", 1)
        configs[name] = flags.split()
    cpu = {}
    for rep in range(A.reps):
        for jdk in A.jdk:
            major, home = jdk.split("=", 1)
            for w in A.workloads.split(","):
                for scale in (s1, s2):
                    for c, flag in configs.items():
                        t = run(home, flag, w, scaled(WORKLOADS[w], scale))
                        cpu.setdefault((major, w, c, scale), []).append(t)
                        print(f"  [r{rep}] jdk{major} {w:12} x{scale:g} {c:9} {t:.2f} s",
                              file=sys.stderr, flush=True)
    print(f"Marginal overhead, {A.reps} interleaved rounds, sizes x{s1:g} and x{s2:g} "
          f"(`{A.opts}`); medians of process CPU (user + system).\n")
    names = [c for c in configs if c != "none"]
    print("| JDK | workload | no profiler: CPU at x%g / x%g | " % (s1, s2) +
          " | ".join(f"{c}: marginal ratio | {c}: one-time s" for c in names) + " |")
    print("| --- | --- | ---: |" + " ---: | ---: |" * len(names))
    for jdk in A.jdk:
        major = jdk.split("=", 1)[0]
        for w in A.workloads.split(","):
            med = {(c, s): statistics.median(cpu[(major, w, c, s)]) for c in configs
                   for s in (s1, s2)}
            slope = {c: (med[(c, s2)] - med[(c, s1)]) / (s2 - s1) for c in configs}
            inter = {c: med[(c, s1)] - slope[c] * s1 for c in configs}
            row = [f"{med[('none', s1)]:.2f} / {med[('none', s2)]:.2f} s"]
            for c in names:
                row.append(f"{slope[c] / slope['none']:.3f}")
                row.append(f"{inter[c] - inter['none']:+.2f}")
            print(f"| {major} | {w} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
