#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The drain thread's cost per JVM (issue 31, docs/BENCHMARKS.md "The drain's adaptive period"):
one or more builds of libfxagent.so, interleaved rounds of a workload each, defaults at 10 ms;
per run the drain thread's CPU and wake-ups as the agent counts them (meta.extra "Sampling":
"drain thread CPU time", "drain wake-ups (passes)"; a build without that counter shows '-'),
its voluntary context switches (/proc/PID/task/TID/status of the thread named fxagent*, polled
every 50 ms: a figure every build has), the start-up parts the agent times (kallsyms, GC
attribution, markers and counters) and the load average at the start.
usage: drain_cost.py --build DIR --jdk HOME [--jdk HOME] --so NAME=PATH [--so NAME=PATH]...
       [--workload cpu|javac] [--rounds N] [--javac-files N] [--out DIR] [--src-zip MAJOR=PATH]
cpu: java-test/bench CpuSingle rounds=60 (~1.5 s of CPU); javac: the first N java.base files of
bench/stack_coverage.py's selection (needs the JDK's lib/src.zip)."""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stack_coverage  # noqa: E402  (the javac workload's source selection)

LABELS = {"samples": "samples taken (rows drained from the rings)",
          "drain CPU": "drain thread CPU time (since it started, at its last pass)",
          "passes": "drain wake-ups (passes)", "slow": "drain wake-ups after a wait over 10 ms",
          "kallsyms": "kallsyms read",
          "symbols": "symbol tables and naming: drain thread CPU time", "gc set-up": "GC attribution set-up CPU time",
          "markers": "drain CPU time for markers and counters",
          "published": "tables published",
          "heap found": "pcs found in the code heaps (compiled since the table)",
          "heap lookups": "code heap lookups by the handler's walks (~8 system calls each)",
          "heap refused": "code heap lookups refused past a sample's budget (24)",
          "heap again": "nmethods found again before the drain took them",
          "scopes us": "nmethod scopes read and decoded (µs of CPU, all reads)",
          "handler ns": "mean CPU ns in handler per signal"}


def command(a, jdk, so, base):
    agent = f"-agentpath:{so}=interval=10ms,quiet,file={base}.json.gz"
    if a.workload == "cpu":
        return [os.path.join(jdk, "bin", "java"), agent, "-cp",
                os.path.join(a.build, "java-test", "fxagent-bench.jar"),
                "fxagent.bench.CpuSingle", "rounds=60"]
    major = subprocess.run([os.path.join(jdk, "bin", "java"), "-XshowSettings:properties",
                            "-version"], capture_output=True, text=True).stderr
    major = next(ln.split("=")[1].strip().split(".")[0] for ln in major.splitlines()
                 if "java.specification.version" in ln)
    zips = dict(z.split("=", 1) for z in a.src_zip)
    return stack_coverage.javac_argv(a.out, jdk, major, zips.get(major) or
                                     os.path.join(jdk, "lib", "src.zip"), a.javac_files, agent)


def drain_switches(pid, last):
    """The voluntary context switches of the agent's drain thread (named fxagent*)."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8") as f:
                if not f.read().startswith("fxagent"):
                    continue
            with open(f"/proc/{pid}/task/{tid}/status", encoding="utf-8") as f:
                for ln in f:
                    if ln.startswith("voluntary_ctxt_switches"):
                        last[tid] = int(ln.split()[1])
    except OSError:
        pass  # the JVM or the thread is gone: the last reading stands


def run(a, jdk, name, so, base):
    load = os.getloadavg()[0]
    t0 = time.time()
    p = subprocess.Popen(command(a, jdk, so, base), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    last = {}
    while p.poll() is None:
        drain_switches(p.pid, last)
        time.sleep(0.05)
    wall = time.time() - t0
    extra = {}
    with gzip.open(base + ".json.gz") as f:
        for g in json.load(f)["meta"].get("extra", []):
            for e in g.get("entries", []):
                extra[e["label"]] = e["value"]
    vcs = max(last.values()) if last else 0
    cols = " | ".join(f"{k} {extra.get(v, '-')}" for k, v in LABELS.items())
    print(f"{name} | {os.path.basename(jdk)} | load {load:.1f} | wall {wall:.2f} s | "
          f"drain switches {vcs} ({vcs / wall:.0f}/s) | {cols}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--jdk", action="append", required=True)
    ap.add_argument("--so", action="append", required=True, help="NAME=PATH")
    ap.add_argument("--workload", choices=["cpu", "javac"], default="cpu")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--javac-files", type=int, default=150)
    ap.add_argument("--out", default="")
    ap.add_argument("--src-zip", action="append", default=[],
                    help="MAJOR=PATH of src.zip where the JDK has none (Debian's 17 without "
                         "openjdk-17-source: its .deb's usr/lib/jvm/openjdk-17/lib/src.zip)")
    a = ap.parse_args()
    a.out = a.out or tempfile.mkdtemp(prefix="fxbench-drain.")
    for r in range(a.rounds):
        for jdk in a.jdk:
            for spec in a.so:
                name, so = spec.split("=", 1)
                run(a, jdk, name, so,
                    os.path.join(a.out, f"r{r}-{name}-{os.path.basename(jdk.rstrip('/'))}"))


if __name__ == "__main__":
    main()
