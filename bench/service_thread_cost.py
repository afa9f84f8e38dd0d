#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a profiler costs the JVM's own threads on javac, thread by thread (issue 31, session 22,
docs/BENCHMARKS.md "HotSpot's side of CompiledMethodLoad"): javac on the first N java.base files
of bench/stack_coverage.py's selection, interleaved rounds of
  none  no agent;
  cml   bench/cml_only_agent.c: CompiledMethodLoad events taken, the callback empty (HotSpot's
        cost of posting them alone, on its Service Thread);
  fx    fxagent's defaults at 10 ms (the --so given);
  NAME  fxagent with more options (--fx-config NAME=OPTIONS, e.g. jvmti=codemap=jvmti);
  ap    async-profiler event=cpu,interval=10ms (only with FXAGENT_BENCH_ASYNC_PROFILER=PATH of
        libasyncProfiler.so, built from its repository in a scratch folder).
Each thread's CPU (utime+stime of /proc/PID/task/TID/stat, polled every 50 ms; the last poll's
figure stands, so a thread's last <50 ms are not seen, alike for every configuration), summed by
thread name (digits dropped), and the whole JVM's CPU from its rusage. Prints one line per run
and the medians (min-max) per configuration.
usage: service_thread_cost.py --so PATH --jdk HOME [--jdk HOME] [--rounds 3] [--javac-files 200]
       [--out DIR] [--src-zip MAJOR=PATH] [--fx-config NAME=OPTIONS]..."""
import argparse
import collections
import os
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stack_coverage  # noqa: E402  (the javac workload's source selection)

TCK = os.sysconf("SC_CLK_TCK")
# thread names as /proc gives them (15 characters); "javac" is the launcher's main thread
SHOWN = ("Service Thread", "fxagent running", "C1 CompilerThre", "C2 CompilerThre", "javac")


def major_of(jdk):
    out = subprocess.run([os.path.join(jdk, "bin", "java"), "-XshowSettings:properties",
                          "-version"], capture_output=True, text=True).stderr
    return next(ln.split("=")[1].strip().split(".")[0] for ln in out.splitlines()
                if "java.specification.version" in ln)


def build_cml_agent(jdk, out):
    so = os.path.join(out, f"cml_only_agent-{os.path.basename(jdk)}.so")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cml_only_agent.c")
    inc = os.path.join(jdk, "include")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-I" + inc, "-I" + os.path.join(inc, "linux"),
                    "-o", so, src], check=True)
    return so


def javac_command(a, jdk, major, agent_opt):
    zips = dict(z.split("=", 1) for z in a.src_zip)
    return stack_coverage.javac_argv(a.out, jdk, major, zips.get(major) or
                                     os.path.join(jdk, "lib", "src.zip"), a.javac_files, agent_opt)


def poll(pid, last):
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat", encoding="utf-8") as f:
                    s = f.read()
            except OSError:
                continue
            name = s[s.index("(") + 1:s.rindex(")")]
            fields = s[s.rindex(")") + 2:].split()
            last[tid] = (name, (int(fields[11]) + int(fields[12])) * 1000 // TCK)
    except OSError:
        pass  # the JVM is gone: the last reading stands


def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last = {}
    while p.poll() is None:
        poll(p.pid, last)
        time.sleep(0.05)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    by = collections.Counter()
    for name, ms in last.values():
        by[name.rstrip("#0123456789 ")] += ms
    return p.returncode, total, by


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--so", required=True, help="libfxagent.so")
    ap.add_argument("--jdk", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--javac-files", type=int, default=200)
    ap.add_argument("--out", default="/tmp/fx-service-thread")
    ap.add_argument("--src-zip", action="append", default=[],
                    help="MAJOR=PATH of src.zip where the JDK has none")
    ap.add_argument("--fx-config", action="append", default=[],
                    help="NAME=OPTIONS: one more fxagent configuration, e.g. jvmti=codemap=jvmti")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    asprof = os.environ.get("FXAGENT_BENCH_ASYNC_PROFILER")
    for jdk in a.jdk:
        major = major_of(jdk)
        configs = {"none": "", "cml": "-agentpath:" + build_cml_agent(jdk, a.out),
                   "fx": f"-agentpath:{a.so}=interval=10ms,quiet,file={a.out}/fx-{major}-%p.json.gz"}
        for extra in a.fx_config:  # each run's profile kept: fx-MAJOR-N, NAME-MAJOR-N
            name, opts = extra.split("=", 1)
            configs[name] = (f"-agentpath:{a.so}=interval=10ms,quiet,{opts},"
                             f"file={a.out}/{name}-{major}-%p.json.gz")
        if asprof:
            configs["ap"] = (f"-agentpath:{asprof}=start,event=cpu,interval=10ms,"
                             f"file={a.out}/ap.jfr")
        res = collections.defaultdict(list)
        for r in range(a.rounds):
            for name, opt in configs.items():
                load = os.getloadavg()[0]
                rc, total, by = run(javac_command(a, jdk, major, opt))
                if rc != 0:
                    sys.exit(f"{name}: javac exited {rc}")
                res[name].append((total, by))
                shown = " ".join(f"{k.replace(' ', '_')}={by.get(k, 0)}" for k in SHOWN)
                print(f"JDK {major} round {r + 1} {name}: load {load:.1f} total {total:.0f} ms "
                      f"{shown}", flush=True)
        print(f"JDK {major}, javac {a.javac_files} files, medians (min-max) of {a.rounds} rounds, ms of CPU:")
        for name, runs in res.items():
            def med(vals):
                return f"{statistics.median(vals):.0f} ({min(vals):.0f}-{max(vals):.0f})"
            cols = [f"total {med([t for t, _ in runs])}"]
            cols += [f"{k} {med([b.get(k, 0) for _, b in runs])}" for k in SHOWN]
            print(f"  {name}: " + ", ".join(cols))


if __name__ == "__main__":
    main()
