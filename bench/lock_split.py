#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The lock view's price, split (issue 31, session 19): LockWorkload bench (4 threads contending
for one monitor and one ReentrantLock in turn, the lock workload of bench/run_views.sh) without a
profiler, with fxagent's defaults and with lock=10ms (and any other agent options or builds
named), interleaved, each JVM under `perf record -e cpu-clock -c 250000 -g` (one sample per
0.25 ms of any thread's CPU, a figure the machine's load moves far less than wall time); every
sample put in one category by its thread and its call chain (category() below); per category
the median over the runs of its CPU per million operations (the workload's own count), and the
difference to no profiler.

Usage: bench/lock_split.py --out DIR [--rounds 5] [--jdk 17=HOME ...] [--seconds 3]
       [--cfg NAME=SO:OPTS ...] [--report-only] [--top N]
--cfg none= is the run without an agent; the default configurations are
none, fx (build/agent/libfxagent.so, interval=10ms) and fx-lock (interval=10ms,lock=10ms).
The same DIR again with --report-only prints the tables of the runs already there; --top N
also lists each configuration's N hottest leaf functions of the bench threads.
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
DEFAULT_CFGS = ["none=", "fx=build/agent/libfxagent.so:interval=10ms,",
                "fx-lock=build/agent/libfxagent.so:interval=10ms,lock=10ms,"]
POSTING = r"post_monitor_contended|JvmtiExport::post_monitor"
PARK = r"Unsafe_Park|Parker::park"
# the rest of a bench thread's samples: by its call chain when the leaf is the kernel's, else by
# the leaf's library (first match)
KERNEL_KINDS = [(r"signal|sigreturn|setup_rt_frame|restore_sigcontext|posix_cpu", "kernel, signal delivery"),
                (r"futex", "kernel, futex (other)"),
                (r"sched_yield|schedule|finish_task_switch", "kernel, scheduler")]
LEAF_KINDS = [(r"perf-|\[unknown\]", "JIT code and interpreter"), (r"libjvm\.so", "libjvm, other")]


def category(comm, chain):
    """One sample's category: chain is its frames, leaf first, each 'symbol (dso)'."""
    s = " ".join(chain)
    leaf = chain[0] if chain else ""
    kernel = "[kernel" in leaf
    if comm.startswith("fxagent lock"):
        return "agent: lock owners thread"
    if comm.startswith("fxagent"):
        return "agent: drain thread"
    if not comm.startswith("bench-"):
        if comm.startswith(("C1 ", "C2 ")):
            return "other: JIT compilers"
        return "other: JVM threads (GC, VM Thread, main...)"
    # the bench threads
    if "park_hook" in s:
        if re.search(PARK, s):
            return "bench: park (the original, under the agent's hook)" + (
                ", kernel" if kernel else "")
        return "bench: agent's park hook (its JNI/JVMTI calls, clock)"
    if re.search(POSTING, s):
        if "libfxagent.so" in s:
            return "bench: agent's monitor callbacks"
        return "bench: HotSpot posting MonitorContendedEnter/ed"
    if "libfxagent.so" in s:
        return "bench: agent's signal handler and other agent code"
    if re.search(PARK, s):
        return "bench: park" + (", kernel" if kernel else "")
    if re.search(r"ObjectMonitor::|ObjectSynchronizer::|SharedRuntime::complete_monitor|"
                 r"monitorenter|monitorexit|Unpark|unpark|ParkEvent", s) or "ObjectMonitor" in leaf:
        return "bench: monitor slow paths (enter, spin, exit, wake-ups)" + (
            ", kernel" if kernel else "")
    kinds = KERNEL_KINDS if kernel else LEAF_KINDS
    return "bench: " + next((k for pattern, k in kinds if re.search(pattern, s if kernel else leaf)),
                            "kernel, other" if kernel else "libc and other libraries")


def parse_cfgs(a):
    cfgs = []
    for c in a.cfg or DEFAULT_CFGS:
        name, rest = c.split("=", 1)
        so, _, opts = rest.partition(":")
        cfgs.append((name, os.path.abspath(so) if so else "", opts))
    return cfgs


def record(a, jdk, home, cfg, r):
    name, so, opts = cfg
    base = os.path.join(a.out, f"{name}@{jdk}@{r}")
    prof = [f"-agentpath:{so}={opts}quiet,file={base}.json.gz"] if so else []
    jar = os.path.join(a.build, "java-test", "fxagent-locks.jar")
    cmd = (["nice", "-n", str(a.nice)] if a.nice else []) + ["perf", "record", "-q", "-e", "cpu-clock", "-c", str(int(PERIOD_MS * 1e6)), "-g", "-o",
           base + ".data", "--", "/usr/bin/time", "-f", "fxtime %w %c",
           os.path.join(home, "bin", "java")] + prof + [
           "-cp", jar, "fxagent.locks.LockWorkload", "bench", "4", str(a.seconds)]
    with open("/proc/loadavg", encoding="utf-8") as f:
        load = f.read().split()[0]
    run = subprocess.run(cmd, capture_output=True, text=True, check=False)
    m = re.search(r"ops (\d+)", run.stdout)
    t = re.search(r"fxtime (\d+) (\d+)", run.stderr)  # the JVM's context switches
    with open(base + ".ops", "w", encoding="utf-8") as f:
        f.write(f"{m.group(1) if m else 0} {load} {t.group(1) if t else 0} {t.group(2) if t else 0}\n")
    txt = subprocess.run(["perf", "script", "-i", base + ".data", "-F", "comm,ip,sym,dso"],
                         capture_output=True, text=True, check=False).stdout
    with open(base + ".txt", "w", encoding="utf-8") as f:
        f.write(txt)
    os.unlink(base + ".data")


COUNTERS = ["voluntary context switches", "involuntary context switches",
            "monitor: contended enters seen", "park: parks with a blocker seen",
            "monitor owner lookups (GetObjectMonitorUsage)", "monitor owner lookup: mean ns",
            "monitor enter callback: mean ns (1 in 64 timed)",
            "monitor entered callback below lock=: mean ns (1 in 64 timed)"]


def per_op(counter):
    return "seen" in counter or "lookups" in counter or "switches" in counter


def lock_counters(path):
    """The agent's "Lock waits" figures of one run (meta.extra), {} without a profile."""
    import gzip
    import json
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            extra = json.load(f).get("meta", {}).get("extra", [])
    except (OSError, ValueError):
        return {}
    for group in extra:
        if group.get("label") == "Lock waits":
            return {e["label"]: e["value"] for e in group.get("entries", [])}
    return {}


def counts(path, leaves):
    c = collections.Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        txt = f.read()
    for block in txt.split("\n\n"):
        lines = [x.strip() for x in block.splitlines() if x.strip()]
        if not lines:
            continue
        chain = [re.sub(r"^[0-9a-f]+ ", "", x) for x in lines[1:]]
        c[category(lines[0], chain)] += 1
        if lines[0].startswith("bench-") and chain:
            leaves[chain[0]] += 1
    return c


def report(a):
    names = [c[0] for c in parse_cfgs(a)]
    per = collections.defaultdict(lambda: collections.defaultdict(list))  # (jdk, cat) -> cfg -> ms/Mop
    meta = collections.defaultdict(list)  # (jdk, cfg) -> (ops, load)
    leaves = collections.defaultdict(collections.Counter)
    lcs = collections.defaultdict(list)  # (jdk, cfg, counter) -> per run (per Mop for counts)
    for path in sorted(glob.glob(os.path.join(a.out, "*.txt"))):
        m = re.match(r"(.+)@(\d+)@\d+\.txt$", os.path.basename(path))
        if not m or m.group(1) not in names:
            continue
        cfg, jdk = m.groups()
        with open(path[:-4] + ".ops", encoding="utf-8") as f:
            ops, load, *switches = f.read().split()
        ops = int(ops)
        if switches and int(switches[0]) > 0:
            lcs[(jdk, cfg, "voluntary context switches")].append(int(switches[0]) / (ops / 1e6))
            lcs[(jdk, cfg, "involuntary context switches")].append(int(switches[1]) / (ops / 1e6))
        if ops == 0:
            continue
        meta[(jdk, cfg)].append((ops, float(load)))
        lc = lock_counters(path[:-4] + ".json.gz")
        for k in COUNTERS:
            if k in lc:
                lcs[(jdk, cfg, k)].append(lc[k] / (ops / 1e6) if per_op(k)
                                          else lc[k])
        c = counts(path, leaves[(jdk, cfg)])
        c["TOTAL"] = sum(c.values())
        c["bench: all"] = sum(n for k, n in c.items() if k.startswith("bench:"))
        for k in set(c) | {k for (j, k) in per if j == jdk}:
            per[(jdk, k)][cfg].append(c.get(k, 0) * PERIOD_MS / (1 if a.per_run else ops / 1e6))
    for jdk in sorted({j for j, _ in meta}):
        print(f"\nJDK {jdk}: ms of CPU {'per run' if a.per_run else 'per million operations'}, "
              f"median of the runs "
              f"(difference to {names[0]})")
        print("category | " + " | ".join(names))
        for (j, k) in sorted(per, key=lambda x: (x[1] != "TOTAL", x[1])):
            if j != jdk:
                continue
            med = {n: statistics.median(per[(j, k)][n]) if per[(j, k)][n] else 0.0
                   for n in names}
            base = med[names[0]]
            cells = [f"{med[names[0]]:.2f}"] + [f"{med[n]:.2f} ({med[n] - base:+.2f})"
                                                 for n in names[1:]]
            print(f"{k} | " + " | ".join(cells))
        for n in names:
            v = meta[(jdk, n)]
            if v:
                print(f"{n}: {len(v)} runs, ops median {statistics.median(x[0] for x in v)/1e6:.1f} M, "
                      f"load {min(x[1] for x in v)}-{max(x[1] for x in v)}")
        for n in names:
            for k in COUNTERS:
                if lcs[(jdk, n, k)]:
                    v = lcs[(jdk, n, k)]
                    print(f"{n}: {k}{' per million operations' if per_op(k) else ''}"
                          f": median {statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f})")
        if a.top:
            for n in names:
                tot = sum(leaves[(jdk, n)].values()) or 1
                print(f"-- {n}: hottest leaves of the bench threads (% of their samples)")
                for sym, k in leaves[(jdk, n)].most_common(a.top):
                    print(f"   {100.0 * k / tot:5.1f} {sym}")


def run_rounds(a):
    """Every configuration once per round and JDK, the order rotated from round to round."""
    a.build = os.path.abspath(a.build)
    os.makedirs(a.out, exist_ok=True)
    cfgs = parse_cfgs(a)
    rounds = [(r, j.split("=", 1)) for r in range(1, a.rounds + 1) for j in a.jdk or DEFAULT_JDKS]
    for r, (jdk, home) in rounds:
        for cfg in cfgs[r % len(cfgs):] + cfgs[:r % len(cfgs)]:
            record(a, jdk, home, cfg, r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--jdk", action="append", default=None, help="MAJOR=HOME (repeatable)")
    ap.add_argument("--cfg", action="append", default=None, help="NAME=SO:OPTS (repeatable)")
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--per-run", action="store_true",
                    help="ms of CPU per run, not per million operations (for fixed costs)")
    ap.add_argument("--nice", type=int, default=0,
                    help="run each JVM at this nice value (-20 as root: the JVM's threads ahead of "
                         "the machine's other work, as on a quiet machine)")
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()
    if not a.report_only:
        run_rounds(a)
    report(a)


if __name__ == "__main__":
    main()
