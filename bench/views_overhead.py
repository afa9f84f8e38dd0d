#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every view of fxagent priced against no profiler, JFR and async-profiler in one interleaved
run (issue 31 item 3, docs/BENCHMARKS.md "Every view priced"). Run by bench/run_views.sh, which
builds the agent and the workloads first.

Configurations (--configs picks some): none; fx (the defaults, 10 ms); fx-alloc (+ alloc=512k);
fx-lock (+ lock=10ms); fx-all (both); jfr (settings=profile); ap-cpu and ap-all (async-profiler
event=cpu, and event=cpu,alloc,lock with JFR output, as it requires), only when
FXAGENT_BENCH_ASYNC_PROFILER names its libasyncProfiler.so (never a path in the repository).
The defaults one at a time, only when --configs names them: fx-kstack-no (kstack=no),
fx-markers-off (markers=off), fx-cstack-fp (cstack=fp), fx-cstack-no (cstack=no).
Workloads (--workloads): cpu (java-test/bench CpuSingle, fixed work), alloc (java-test/alloc
AllocWorkload rounds, fixed work), lock (java-test/locks LockWorkload bench: 4 threads contending
for a monitor and a ReentrantLock for a fixed time; its figure is CPU per operation), javac (that
JDK's javac compiling part of its own java.base sources, ~30 s of CPU; needs lib/src.zip;
--javac-files N compiles only the first N files, to try the harness).

Each run's figure is the JVM's own CPU (user + sys of the child, from wait4), the 1-minute load
average read just before it, and for lock the operations done. Rounds rotate the order of the
configurations; the table gives per cell the median of the per-round ratios to no profiler in
the same round (CPU per operation for lock) with their min-max, and the median load. The
agent's own counters of the last fxagent run of each cell go to OUT/extra-*.txt."""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stack_coverage  # noqa: E402  (the javac workload's source selection)

CONFIGS = ["none", "fx", "fx-alloc", "fx-lock", "fx-all", "jfr", "ap-cpu", "ap-all"]
FX_OPTS = {"fx": "", "fx-alloc": "alloc=512k,", "fx-lock": "lock=10ms,",
           "fx-all": "alloc=512k,lock=10ms,"}
# The defaults one at a time (issue 31 item 5): run only when --configs names them.
TOGGLES = {"fx-kstack-no": "kstack=no,", "fx-markers-off": "markers=off,",
           "fx-cstack-fp": "cstack=fp,", "fx-cstack-no": "cstack=no,",
           "fx-codemap-jvmti": "codemap=jvmti,"}
FX_OPTS.update(TOGGLES)
AP_EVENTS = {"ap-cpu": "event=cpu,interval=10ms,file={base}.jfr",
             "ap-all": "event=cpu,interval=10ms,alloc=512k,lock=10ms,file={base}.jfr"}


def workload_cmd(a, jdk, work, prof):
    java = os.path.join(jdk["home"], "bin", "java")
    prof = a.jvm_flags + prof  # --jvm-flags: the same JVM options in every configuration
    if work == "cpu":
        return [java] + prof + ["-cp", os.path.join(a.build, "java-test", "fxagent-bench.jar"),
                                "fxagent.bench.CpuSingle", f"rounds={a.cpu_rounds}"]
    if work == "alloc":
        return [java] + prof + ["-cp", os.path.join(a.build, "java-test", "fxagent-alloc.jar"),
                                "fxagent.alloc.AllocWorkload", "rounds", str(a.alloc_rounds)]
    if work == "lock":
        return [java] + prof + ["-cp", os.path.join(a.build, "java-test", "fxagent-locks.jar"),
                                "fxagent.locks.LockWorkload", "bench", "4", str(a.lock_seconds)]
    dest = os.path.join(a.out, "javac-out")
    subprocess.run(["rm", "-rf", dest], check=True)
    os.makedirs(dest)
    return [os.path.join(jdk["home"], "bin", "javac")] + ["-J" + p for p in prof] + [
        "--patch-module", f"java.base={jdk['patch']}", "-d", dest, "-nowarn", "-Xlint:none",
        "-proc:none", "-implicit:none", "-XDignore.symbol.file", "@" + jdk["files"]]


def prof_opts(a, cfg, base):
    if cfg == "none":
        return []
    if cfg in FX_OPTS:
        return [f"-agentpath:{a.agent}={FX_OPTS[cfg]}interval=10ms,quiet,file={base}.json.gz"]
    if cfg == "jfr":
        return [f"-XX:StartFlightRecording=settings=profile,filename={base}.jfr"]
    return [f"-agentpath:{a.ap}=start," + AP_EVENTS[cfg].format(base=base)]


def configs_for(a, configs, work):
    """The configurations a workload runs: --javac-configs narrows javac's (the longest rows:
    ~2/3 of a full run), always with none."""
    if work != "javac" or not a.javac_configs:
        return configs
    keep = set(a.javac_configs.split(",")) | {"none"}
    return [c for c in configs if c in keep]


def run_one(cmd, log):
    load = os.getloadavg()[0]
    with open(log, "w", encoding="utf-8") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"views_overhead: {' '.join(cmd)} failed, see {log}")
    ops = 1
    with open(log, encoding="utf-8") as f:
        for line in f:
            if line.startswith("ops "):
                ops = int(line.split()[1])
    return ru.ru_utime + ru.ru_stime, ops, load


def fx_extra(path, out):
    """The agent's counters of one run, group | label = value, for the split by parts."""
    try:
        with gzip.open(path) as f:
            p = json.load(f)
    except (OSError, ValueError):
        return
    with open(out, "w", encoding="utf-8") as f:
        for g in p.get("meta", {}).get("extra", []):
            for e in g.get("entries", []):
                f.write(f"{g.get('label')} | {e.get('label')} = {e.get('value')}\n")


def jdks(a):
    out = []
    for spec in a.jdk:
        major, home = spec.split("=", 1)
        j = {"home": home, "major": major}
        if "javac" in a.workloads:
            z = dict(x.split("=", 1) for x in a.src_zip).get(
                major, os.path.join(home, "lib", "src.zip"))
            if not os.path.isfile(z):
                sys.exit(f"views_overhead: JDK {major} has no {z} (a dangling link means its "
                         "source package is not installed: apt-get install "
                         f"openjdk-{major}-source, or pass --src-zip {major}=PATH)")
            j["patch"], j["files"], n = stack_coverage.prepare_javac(a.out, major, z)
            if 0 < a.javac_files < n:  # the first N of the sorted listing: a shorter javac
                with open(j["files"], encoding="utf-8") as f:
                    keep = f.read().splitlines()[:a.javac_files]
                j["files"] = os.path.join(a.out, f"javac-files-{major}-{a.javac_files}.txt")
                with open(j["files"], "w", encoding="utf-8") as f:
                    f.write("\n".join(keep) + "\n")
        out.append(j)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="build directory (agent, java-test jars)")
    ap.add_argument("--jdk", action="append", required=True, help="MAJOR=HOME (repeatable)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workloads", default="cpu,alloc,lock")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--cpu-rounds", type=int, default=60)
    ap.add_argument("--alloc-rounds", type=int, default=3000)
    ap.add_argument("--lock-seconds", type=int, default=3)
    ap.add_argument("--javac-configs", default="",
                    help="javac runs only these configurations (and none); the others: all")
    ap.add_argument("--javac-files", type=int, default=0,
                    help="compile only the first N of the 627 java.base files (0: all)")
    ap.add_argument("--src-zip", action="append", default=[],
                    help="MAJOR=PATH of a src.zip for javac (a JDK's lib/src.zip otherwise)")
    ap.add_argument("--jvm-flags", default="",
                    help="JVM options for every run, e.g. batch compilation and a fixed "
                         "serial heap: '-Xbatch -XX:+UseSerialGC -Xms256m -Xmx256m'")
    a = ap.parse_args()
    a.jvm_flags = a.jvm_flags.split()
    a.workloads = a.workloads.split(",")
    a.agent = os.path.join(a.build, "agent", "libfxagent.so")
    a.ap = os.environ.get("FXAGENT_BENCH_ASYNC_PROFILER", "")
    unknown = [c for c in a.configs.split(",") if c not in CONFIGS and c not in TOGGLES]
    if unknown:
        sys.exit(f"views_overhead: unknown configuration {unknown[0]} (known: "
                 f"{', '.join(CONFIGS + list(TOGGLES))})")
    configs = [c for c in a.configs.split(",") if c in CONFIGS or c in TOGGLES]
    if not a.ap:
        skipped = [c for c in configs if c.startswith("ap-")]
        configs = [c for c in configs if not c.startswith("ap-")]
        if skipped:
            print(f"views_overhead: FXAGENT_BENCH_ASYNC_PROFILER not set: {skipped} left out")
    os.makedirs(a.out, exist_ok=True)
    res = {}  # (major, work, cfg) -> [(cpu, ops, load)] per round
    js = jdks(a)
    t0 = time.monotonic()
    for rnd in range(a.rounds):
        if rnd == 1:
            took = time.monotonic() - t0
            print(f"round 1 took {took / 60:.1f} min: all {a.rounds} rounds ~"
                  f"{took * a.rounds / 60:.0f} min", flush=True)
        for ji, jdk in enumerate(js):
            for wi, work in enumerate(a.workloads):
                cs = configs_for(a, configs, work)
                k = (rnd + ji + wi) % len(cs)
                for cfg in cs[k:] + cs[:k]:
                    base = os.path.join(a.out, f"{jdk['major']}-{work}-{cfg}")
                    cmd = workload_cmd(a, jdk, work, prof_opts(a, cfg, base))
                    r = run_one(cmd, base + ".log")
                    res.setdefault((jdk["major"], work, cfg), []).append(r)
                    if cfg in FX_OPTS:
                        fx_extra(base + ".json.gz", os.path.join(
                            a.out, f"extra-{jdk['major']}-{work}-{cfg}.txt"))
                    print(f"round {rnd + 1} JDK {jdk['major']} {work} {cfg}: {r[0]:.2f} s CPU, "
                          f"{r[1]} ops, load {r[2]:.1f}", flush=True)
        report(a, js, configs, res, rnd + 1)  # each round's: a run cut short keeps its rounds


def report(a, js, configs, res, done):
    flags = f", JVM options {' '.join(a.jvm_flags)}" if a.jvm_flags else ""
    lines = [f"{time.strftime('%Y-%m-%d %H:%M')}, {done} of {a.rounds} rounds, {os.cpu_count()} CPUs"
             f"{flags}; "
             "each cell: median ratio of the JVM's CPU (per operation for lock) to no profiler "
             "in the same round (min-max), median 1-min load average before the runs", "",
             "| JDK | workload | none CPU s | " + " | ".join(c for c in configs if c != "none") +
             " |", "| --- | --- | ---: | " + " | ".join("---:" for c in configs if c != "none") +
             " |"]
    for jdk in js:
        for work in a.workloads:
            none = res[(jdk["major"], work, "none")]
            cells = []
            for cfg in configs:
                if cfg == "none":
                    continue
                rs = res.get((jdk["major"], work, cfg))
                if rs is None:
                    cells.append("-")
                    continue
                ratios = [(c / o) / (nc / no) for (c, o, _), (nc, no, _) in zip(rs, none)]
                load = statistics.median(r[2] for r in rs)
                cells.append(f"{statistics.median(ratios):.3f} ({min(ratios):.2f}-"
                             f"{max(ratios):.2f}) L{load:.0f}")
            ncpu = statistics.median(r[0] for r in none)
            nload = statistics.median(r[2] for r in none)
            lines.append(f"| {jdk['major']} | {work} | {ncpu:.2f} L{nload:.0f} | " +
                         " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "report.md"), "w", encoding="utf-8") as f:
        f.write(text)
    if done == a.rounds:
        print(text)


if __name__ == "__main__":
    main()
