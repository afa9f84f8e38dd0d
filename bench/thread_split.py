#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where the agent's extra CPU goes on a short fixed-work run (issue 31, session 18): CpuSingle
without a profiler and with fxagent's defaults, interleaved, each JVM under
`perf record -e cpu-clock -c 250000 -g` (one sample per 0.25 ms of CPU of any thread: a CPU
time that the machine's load moves far less than the JVM's wall time), then every sample put
in one category by its thread's name and its call chain (the rules in category() below), and
the mean and median difference in ms per category over the rounds.

Usage: bench/thread_split.py --build BUILD --out DIR [--rounds 8] [--jdk 17=HOME ...]
       [--cpu-rounds 130] [--fx-opts OPTS] [--report-only]
The same DIR again with --report-only prints the table of the runs already there. perf must be
allowed to record (root, or perf_event_paranoid <= 1); the software cpu-clock event suffices.
"""
import argparse
import collections
import glob
import os
import re
import statistics
import subprocess

PERIOD_MS = 0.25
DEFAULT_JDKS = ["17=/usr/lib/jvm/java-17-openjdk-amd64", "25=/usr/lib/jvm/temurin-25-jdk-amd64"]
KERNEL_TIMER = r"hrtimer|tick_|irqentry_exit|exit_to_user|sysvec_"


def category(comm, chain):
    """One sample's category: chain is its frames, leaf first, each 'symbol (dso)'."""
    s = " ".join(chain)
    leaf = chain[0] if chain else ""
    if comm.startswith("fxagent"):
        return "agent's drain thread"
    if comm.startswith("Service Thr"):
        return "Service Thread (code events)"
    if comm.startswith(("C1 ", "C2 ")):
        if "libfxagent.so" in s:
            return "JIT compilers: agent code (their samples)"
        if "[kernel" in leaf and re.search(KERNEL_TIMER + r"|signal|finish_task_switch", s):
            return "JIT compilers: kernel irq, signal, switch"
        return "JIT compilers: compiling"
    if comm.startswith(("GC ", "G1 ", "VM Thread")):
        return "GC and VM Thread"
    if comm != "java":
        return "other JVM threads"
    if "libfxagent.so" in s or "libz.so" in s:
        return "main: agent code (handler, VMInit, events, exit dump)"
    if "[kernel" in leaf:
        if re.search(r"signal|sigreturn|setup_rt_frame|restore_sigcontext|posix_cpu", s):
            return "main: kernel, signal delivery and CPU timers"
        if re.search(KERNEL_TIMER, s):
            return "main: kernel, interrupts, irq return, preemption"
        if re.search(r"finish_task_switch|schedule", s):
            return "main: kernel, scheduler"
        return "main: kernel, other (page faults, system calls)"
    if "perf-" in leaf or "[unknown]" in leaf:
        return "main: JIT code and interpreter"
    if "libjvm.so" in leaf:
        return "main: libjvm"
    return "main: libc, ld.so, other libraries"


def record(a, jdk, home, cfg, r):
    base = os.path.join(a.out, f"{cfg}-{jdk}-{r}")
    prof = []
    if cfg == "fx":
        prof = [f"-agentpath:{a.build}/agent/libfxagent.so={a.fx_opts}quiet,file={base}.json.gz"]
    jar = os.path.join(a.build, "java-test", "fxagent-bench.jar")
    cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-c", str(int(PERIOD_MS * 1e6)), "-g", "-o",
           base + ".data", "--", os.path.join(home, "bin", "java")] + prof + [
           "-cp", jar, "fxagent.bench.CpuSingle", f"rounds={a.cpu_rounds}"]
    with open("/proc/loadavg", encoding="utf-8") as f:
        load = f.read().split()[0]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    with open(os.path.join(a.out, "log"), "a", encoding="utf-8") as f:
        f.write(f"{cfg} {jdk} {r} load={load}\n")


def counts(path):
    out = subprocess.run(["perf", "script", "-i", path, "-F", "comm,ip,sym,dso"],
                         capture_output=True, text=True, check=False).stdout
    c = collections.Counter()
    for block in out.split("\n\n"):
        lines = [x.strip() for x in block.splitlines() if x.strip()]
        if lines:
            c[category(lines[0], [re.sub(r"^[0-9a-f]+ ", "", x) for x in lines[1:]])] += 1
    return c


def report(a):
    tab = collections.defaultdict(lambda: collections.defaultdict(list))
    runs = collections.Counter()
    for path in sorted(glob.glob(os.path.join(a.out, "*.data"))):
        m = re.match(r"(none|fx)-(\d+)-\d+\.data$", os.path.basename(path))
        if not m:
            continue
        cfg, jdk = m.groups()
        runs[(jdk, cfg)] += 1
        c = counts(path)
        c["TOTAL"] = sum(c.values())
        for k, n in c.items():
            tab[(jdk, k)][cfg].append(n * PERIOD_MS)
    print("JDK category | none ms (mean) | fx ms (mean) | diff mean | diff median | runs")
    for (jdk, k) in sorted(tab):
        v = {cfg: tab[(jdk, k)][cfg] + [0.0] * (runs[(jdk, cfg)] - len(tab[(jdk, k)][cfg]))
             for cfg in ("none", "fx")}
        if not v["none"] or not v["fx"]:
            continue
        mn, mf = statistics.mean(v["none"]), statistics.mean(v["fx"])
        dmed = statistics.median(v["fx"]) - statistics.median(v["none"])
        print(f"{jdk} {k} | {mn:.1f} | {mf:.1f} | {mf - mn:+.1f} | {dmed:+.1f} | "
              f"{len(v['none'])}/{len(v['fx'])}")
    log = os.path.join(a.out, "log")
    if os.path.exists(log):
        with open(log, encoding="utf-8") as f:
            loads = sorted(float(x.split("load=")[1]) for x in f if "load=" in x)
        if loads:
            print(f"1-minute load before the runs: {loads[0]}-{loads[-1]}, "
                  f"median {statistics.median(loads)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--jdk", action="append", default=None, help="MAJOR=HOME (repeatable)")
    ap.add_argument("--cpu-rounds", type=int, default=130)
    ap.add_argument("--fx-opts", default="interval=10ms,", help="agent options before quiet,file=")
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    os.makedirs(a.out, exist_ok=True)
    if not a.report_only:
        jdks = [j.split("=", 1) for j in (a.jdk or DEFAULT_JDKS)]
        for r in range(1, a.rounds + 1):
            for jdk, home in jdks:
                for cfg in (("none", "fx") if r % 2 == 0 else ("fx", "none")):
                    record(a, jdk, home, cfg, r)
    report(a)


if __name__ == "__main__":
    main()
