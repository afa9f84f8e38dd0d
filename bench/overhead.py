#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fxagent's overhead benchmark: runs the Java workloads of java-test/bench under no profiler,
fxagent (cpu 10 ms, cpu 1 ms, wall 10 ms), JFR (`settings=profile`) and optionally another agent,
interleaved round-robin, and prints Markdown tables of medians, spreads and ratios against the
unprofiled runs of the same invocation. Called by bench/run_overhead.sh (which builds and finds the
JDKs); see docs/BENCHMARKS.md for the method and the results.

Parts (--parts, comma-separated; default all):
  overhead  every workload x every configuration, --reps rounds
  cost      DeepStack at depth 10/100/1000: ns in the SIGPROF handler per sample (meta.extra) and
            the extra process CPU per sample
  scaling   ManyThreads at 1/10/100/500 threads (cpu and wall mode, RSS); Server at 10 ms, 1 ms,
            100 us; DeepStack with one or unique stacks at several recording lengths (dump time,
            file size, RSS)
  accuracy  the demo (worker-1: alpha/beta/gamma = 50/30/20 % of its CPU) under fxagent and JFR in
            the same JVM; shares against the demo's own measurement

Every run is one JVM; each JVM's elapsed time comes from the workload itself (the work only),
its process CPU time and peak RSS from wait4(2) (all threads: JIT, GC, the profiler's own).
Results go to OUT/results.jsonl (one JSON object per run, written as it ends) and the tables to
OUT/report.md; `--report-only OUT` re-renders them (and the plots) without running anything.
"""
import argparse
import gzip
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

RESULT_RE = re.compile(r"^fxbench workload=(\S+) (.*)$", re.M)
WORKLOADS = {  # name -> default arguments (fixed work of about 2 s on one idle 2-core machine)
    "CpuSingle": ["rounds=120"],
    "Server": ["threads=16", "requests=60000"],
    "DeepStack": ["depth=200", "descents=8000"],
    "ManyThreads": ["threads=500", "busy=4", "rounds=200"],
}
# A JVM that does (almost) nothing: its time and CPU are each configuration's fixed cost (start-up,
# the profiler's initialisation, shutdown and dump), removed in the "fixed cost removed" rows.
EMPTY = ("CpuSingle", ["rounds=1"])
OVERHEAD_CONFIGS = ["none", "fx-cpu-10ms", "fx-cpu-1ms", "fx-wall-10ms", "jfr-profile"]
CONFIG_TITLES = {
    "none": "no profiler",
    "fx-cpu-10ms": "fxagent cpu 10 ms",
    "fx-cpu-1ms": "fxagent cpu 1 ms",
    "fx-cpu-100us": "fxagent cpu 100 µs",
    "fx-wall-10ms": "fxagent wall 10 ms",
    "fx-timer-10ms": "fxagent cpu 10 ms (timer_create)",
    "fx-cpu-1ms-ring64k": "fxagent cpu 1 ms, ring=64k",
    "fx-cpu-200us": "fxagent cpu 200 µs",
    "jfr-profile": "JFR profile",
    "other": "other agent",
    "fx-cpu-10ms+jfr": "fxagent cpu 10 ms + JFR profile",
    "base-cpu-10ms": "baseline fxagent cpu 10 ms",
    "base-cpu-1ms": "baseline fxagent cpu 1 ms",
}
# With --baseline-agent: the same fxagent configurations run with another build of the agent (e.g.
# main's, to show that a change leaves the overhead as it was), in the same rounds.
BASELINE_CONFIGS = {"base-cpu-10ms": "mode=cpu,interval=10ms", "base-cpu-1ms": "mode=cpu,interval=1ms"}


# ---------------------------------------------------------------- running one JVM

class Ctx:
    def __init__(self, a):
        self.a = a
        self.out = a.out
        self.results = os.path.join(a.out, "results.jsonl")
        self.files = os.path.join(a.out, "files")
        os.makedirs(self.files, exist_ok=True)
        self.jdks = []
        for spec in a.jdk or []:
            major, home = spec.split("=", 1)
            self.jdks.append((major, home))
        self.other = os.environ.get("FXAGENT_BENCH_OTHER_AGENT", "").strip()
        self.pin = []
        if (os.cpu_count() or 1) > 2 and shutil.which("taskset"):
            self.pin = ["taskset", "-c", "0,1"]  # every run sees the same 2 CPUs
        self.seq = 0


def config_flags(ctx, cfg, base):
    """JVM flags of a configuration; `base` is the path stem for its output file."""
    agent = ctx.a.agent
    fx = {
        "fx-cpu-10ms": "mode=cpu,interval=10ms",
        "fx-cpu-1ms": "mode=cpu,interval=1ms",
        "fx-cpu-100us": "mode=cpu,interval=100us",
        "fx-wall-10ms": "mode=wall,interval=10ms",
        "fx-timer-10ms": "mode=cpu,engine=timer,interval=10ms",
        "fx-cpu-1ms-ring64k": "mode=cpu,interval=1ms,ring=64k,depth=1024",
        "fx-cpu-200us": "mode=cpu,interval=200us",
    }
    jfr = f"-XX:StartFlightRecording=settings=profile,filename={base}.jfr"
    if cfg == "none":
        return []
    if cfg in fx:
        return [f"-agentpath:{agent}={fx[cfg]},file={base}.json.gz,quiet"]
    if cfg == "jfr-profile":
        return [jfr]
    if cfg == "fx-cpu-10ms+jfr":
        return [f"-agentpath:{agent}=mode=cpu,interval=10ms,file={base}.json.gz,quiet", jfr]
    if cfg == "other":
        return shlex.split(ctx.other)
    if cfg in BASELINE_CONFIGS:
        return [f"-agentpath:{ctx.a.baseline_agent}={BASELINE_CONFIGS[cfg]},file={base}.json.gz,quiet"]
    raise ValueError(cfg)


def overhead_configs(ctx):
    """The overhead part's configurations: --configs if given, else all, plus "other" and the
    baseline's when they are set."""
    configs = OVERHEAD_CONFIGS + (["other"] if ctx.other else [])
    if ctx.a.baseline_agent:
        configs += list(BASELINE_CONFIGS)
    if ctx.a.configs:
        wanted = ctx.a.configs.split(",")
        configs = [c for c in configs if c in wanted]
    return configs


def parse_line(text):
    m = RESULT_RE.search(text)
    if not m:
        return None
    out = {"workload": m.group(1)}
    for kv in m.group(2).split():
        k, v = kv.split("=", 1)
        try:
            out[k] = float(v) if k != "checksum" else v
        except ValueError:
            out[k] = v
    return out


def meta_extra(path):
    """meta.extra of an fxagent profile as {"group/label": value}, plus thread and stack counts."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        prof = json.load(f)
    out = {}
    for g in prof.get("meta", {}).get("extra", []):
        for e in g.get("entries", []):
            out[g["label"] + "/" + e["label"]] = e.get("value")
    out["threads in profile"] = len(prof.get("threads", []))
    out["stack table rows"] = prof.get("shared", {}).get("stackTable", {}).get("length")
    return out


def ms_value(s):
    m = re.match(r"([\d.]+) ms", str(s or ""))
    return float(m.group(1)) if m else None


def mib_value(s):
    m = re.match(r"([\d.]+) MiB", str(s or ""))
    return float(m.group(1)) if m else None


def fx_figures(extra):
    return {
        "engine": extra.get("Sampling/engine"),
        "interval_eff_ms": ms_value(next((v for k, v in extra.items()
                                          if k.startswith("Sampling/interval effective")), None)),
        "samples": extra.get("Sampling/samples"),
        "weight": extra.get("Sampling/sample weight total"),
        "signals": extra.get("Sampling/signals handled"),
        "handler_mean_ns": extra.get("Sampling/mean CPU ns in handler per signal"),
        "handler_max_ns": extra.get("Sampling/max CPU ns in handler (timed signals)",
                                    extra.get("Sampling/max CPU ns in handler")),
        "drops": extra.get("Losses/ring drops (all threads)"),
        "truncated": extra.get("Losses/truncated stacks"),
        "over_memory": extra.get("Losses/samples over the memory bound",
                                 extra.get("Memory bound/dropped since sampling began")),
        "table_full": extra.get(
            "Memory bound/samples with [stack table full] (tables at their limit)"),
        "model_mib": mib_value(extra.get("Memory bound/model memory at this dump")),
        "threads_sampled": extra.get("Losses/threads sampled"),
        "threads_in_profile": extra.get("threads in profile"),
        "stack_rows": extra.get("stack table rows"),
        "java_stacks": extra.get("AsyncGetCallTrace outcomes/Java stack"),
    }


def run_jvm(ctx, part, jdk, cfg, cls, wargs, rep, keep=False, cp=None, extra_rec=None):
    major, home = jdk
    ctx.seq += 1
    base = os.path.join(ctx.files, f"{part}-{ctx.seq:05d}-jdk{major}-{cfg}")
    cmd = ctx.pin + [os.path.join(home, "bin", "java"), "-Xmx1g"] + config_flags(ctx, cfg, base)
    cmd += ["-cp", cp or ctx.a.jar, cls] + wargs
    load = os.getloadavg()[0]
    with open(base + ".out", "w") as so, open(base + ".err", "w") as se:
        t0, e0 = time.monotonic(), time.time()
        p = subprocess.Popen(cmd, stdout=so, stderr=se)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall, exit_epoch = time.monotonic() - t0, time.time()
    text = open(base + ".out").read()
    rec = {"part": part, "jdk": major, "config": cfg, "class": cls, "args": wargs, "rep": rep,
           "cmd": " ".join(shlex.quote(c) for c in cmd), "load1": load, "start_epoch": e0,
           "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "user_s": ru.ru_utime,
           "sys_s": ru.ru_stime, "maxrss_kb": ru.ru_maxrss, "rc": p.returncode, "base": base}
    res = parse_line(text)
    if p.returncode != 0 or (res is None and cls.startswith("fxagent.bench")):
        err = open(base + ".err").read()[-2000:]
        rec["error"] = f"exit {p.returncode}; stderr tail: {err}"
        print(f"  FAILED: {rec['cmd']}\n  {rec['error']}", file=sys.stderr)
    if res:
        rec["w"] = res
        if "end_epoch_ms" in res:
            rec["shutdown_ms"] = exit_epoch * 1e3 - res["end_epoch_ms"]
    if os.path.exists(base + ".json.gz"):
        rec["fx_file_bytes"] = os.path.getsize(base + ".json.gz")
        try:
            rec["fx"] = fx_figures(meta_extra(base + ".json.gz"))
        except (OSError, ValueError) as e:
            rec["fx_error"] = str(e)
    if os.path.exists(base + ".jfr"):
        rec["jfr_file_bytes"] = os.path.getsize(base + ".jfr")
    if extra_rec:
        rec.update(extra_rec(rec, base))
    if not keep and not ctx.a.keep:
        for ext in (".json.gz", ".jfr"):
            if os.path.exists(base + ext):
                os.remove(base + ext)
    with open(ctx.results, "a") as f:
        f.write(json.dumps(rec) + "\n")
    el = rec.get("w", {}).get("elapsed_ms")
    print(f"  [{part} r{rep}] jdk{major} {cfg:16s} {cls.split('.')[-1]:11s} {' '.join(wargs)}: "
          f"elapsed {el if el is None else round(el)} ms, cpu {rec['cpu_s']:.2f} s, "
          f"load {load:.1f}", file=sys.stderr)
    return rec


def rotated(items, k):
    k %= len(items)
    return items[k:] + items[:k]


def scaled(args, scale):
    """Multiplies the work-size argument (rounds, requests, descents) by scale."""
    out = []
    for a in args:
        k, v = a.split("=", 1)
        if k in ("rounds", "requests", "descents"):
            v = str(max(1, int(round(int(v) * scale))))
        out.append(f"{k}={v}")
    return out


# ---------------------------------------------------------------- the parts

def part_overhead(ctx):
    configs = overhead_configs(ctx)
    for rep in range(ctx.a.reps):
        for ji, jdk in enumerate(ctx.jdks):
            for wi, (w, args) in enumerate(WORKLOADS.items()):
                for cfg in rotated(configs, rep + wi + ji):
                    run_jvm(ctx, "overhead", jdk, cfg, "fxagent.bench." + w,
                            scaled(args, ctx.a.scale), rep)
            for cfg in rotated(configs, rep + ji):
                run_jvm(ctx, "empty", jdk, cfg, "fxagent.bench." + EMPTY[0], EMPTY[1], rep)


def part_cost(ctx):
    depths = [10, 100, 1000]
    configs = ["none", "fx-cpu-10ms", "fx-cpu-1ms", "fx-timer-10ms", "fx-cpu-1ms-ring64k"]
    for rep in range(ctx.a.reps_small):
        for jdk in ctx.jdks:
            for di, d in enumerate(depths):
                for cfg in rotated(configs, rep + di):
                    run_jvm(ctx, "cost", jdk, cfg, "fxagent.bench.DeepStack",
                            scaled([f"depth={d}", "descents=8000"], ctx.a.scale), rep)


def stacks_count(ctx):
    def f(rec, base):
        if not os.path.exists(base + ".json.gz") or not os.path.exists(ctx.a.fxcheck):
            return {}
        t0 = time.monotonic()
        p = subprocess.run([ctx.a.fxcheck, base + ".json.gz"], capture_output=True, text=True)
        return {"fxcheck_ok": p.returncode == 0, "fxcheck_s": time.monotonic() - t0}
    return f


def part_scaling(ctx):
    for rep in range(ctx.a.reps_small):
        for jdk in ctx.jdks:
            for ni, n in enumerate([1, 10, 100, 500]):
                for cfg in rotated(["none", "fx-cpu-10ms", "fx-wall-10ms"], rep + ni):
                    run_jvm(ctx, "threads", jdk, cfg, "fxagent.bench.ManyThreads",
                            scaled([f"threads={n}", "busy=1", "rounds=100"], ctx.a.scale), rep)
            for cfg in rotated(["none", "fx-cpu-10ms", "fx-cpu-1ms", "fx-cpu-100us"], rep):
                run_jvm(ctx, "interval", jdk, cfg, "fxagent.bench.Server",
                        scaled(WORKLOADS["Server"], ctx.a.scale), rep)
    lengths = [1, 2, 4, 8]
    for rep in range(1):
        for jdk in ctx.jdks:
            for li, length in enumerate(lengths):
                for variety in (1, 4):
                    for cfg in rotated(["none", "fx-cpu-200us"], rep + li):
                        run_jvm(ctx, "length", jdk, cfg, "fxagent.bench.DeepStack",
                                scaled(["depth=100", f"variety={variety}", "threads=2",
                                        "descents=4000"], length * ctx.a.scale), rep,
                                extra_rec=stacks_count(ctx))


DEMO_RE = re.compile(r"alpha ([\d.]+)% beta ([\d.]+)% gamma ([\d.]+)%")
METHODS = ("alpha", "beta", "gamma")


def fx_shares(ctx, path):
    p = subprocess.run([ctx.a.fxcheck, "--summary-json", path], capture_output=True, text=True)
    if p.returncode != 0:
        return None, f"fxcheck failed: {p.stderr.strip()[:300]}"
    summ = json.loads(p.stdout)
    w1 = [t for t in summ["threads"] if t.get("name") == "worker-1"]
    if not w1:
        return None, "no worker-1 thread"
    counts = {m: 0.0 for m in METHODS}
    for fn in w1[0]["funcs"]:
        for m in METHODS:
            if re.search(r"(^|\.)Demo\." + m + r"$", fn["name"]):
                counts[m] += fn["total"]
    return counts, None


def jfr_shares(jdk_home, path):
    """Inclusive jdk.ExecutionSample counts per method in worker-1 (`jfr print --json`)."""
    p = subprocess.run([os.path.join(jdk_home, "bin", "jfr"), "print", "--json", "--events",
                        "jdk.ExecutionSample", path], capture_output=True, text=True)
    if p.returncode != 0:
        return None, f"jfr print failed: {p.stderr.strip()[:300]}", 0
    events = json.loads(p.stdout)["recording"]["events"]
    counts = {m: 0.0 for m in METHODS}
    total = 0
    for ev in events:
        v = ev["values"]
        if (v.get("sampledThread") or {}).get("javaName") != "worker-1":
            continue
        total += 1
        names = set()
        for fr in (v.get("stackTrace") or {}).get("frames", []):
            meth = fr.get("method") or {}
            cls = ((meth.get("type") or {}).get("name") or "").replace("/", ".")
            if cls == "fxagent.demo.Demo":
                names.add(meth.get("name"))
        for m in METHODS:
            if m in names:
                counts[m] += 1
    return counts, None, total


def part_accuracy(ctx):
    secs = "1.5" if ctx.a.quick else "4"
    for rep in range(ctx.a.reps_small):
        for jdk in ctx.jdks:
            def shares(rec, base, jdk=jdk):
                out = {}
                text = open(base + ".out").read()
                m = DEMO_RE.search(text)
                if m:
                    out["truth"] = dict(zip(METHODS, (float(x) for x in m.groups())))
                if os.path.exists(base + ".json.gz"):
                    c, err = fx_shares(ctx, base + ".json.gz")
                    out["fx_counts"], out["fx_err"] = c, err
                if os.path.exists(base + ".jfr"):
                    c, err, total = jfr_shares(jdk[1], base + ".jfr")
                    out["jfr_counts"], out["jfr_err"], out["jfr_worker1"] = c, err, total
                return out
            run_jvm(ctx, "accuracy", jdk, "fx-cpu-10ms+jfr", "fxagent.demo.Demo", [secs], rep,
                    cp=ctx.a.demo_jar, extra_rec=shares)


# ---------------------------------------------------------------- statistics and tables

def med(xs):
    return statistics.median(xs) if xs else None


def spread(xs):
    return (min(xs), max(xs)) if xs else (None, None)


def fmt(x, nd=3):
    if x is None:
        return "–"
    if isinstance(x, float) and abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{nd}f}"


def fmt_ms(x):
    return "–" if x is None else f"{x:,.0f}"


def cell(xs, nd=3):
    if not xs:
        return "–"
    lo, hi = spread(xs)
    return f"{fmt(med(xs), nd)} ({fmt(lo, nd)}–{fmt(hi, nd)})"


def ok(r):
    return "error" not in r and ("w" in r or not r["class"].startswith("fxagent.bench"))


def metric(r, m):
    if m == "cpu_s":
        return r["cpu_s"]
    if m == "maxrss_mb":
        return r["maxrss_kb"] / 1024.0
    return r.get("w", {}).get(m)


def paired_ratios(runs, base_runs, m):
    """Ratios run/baseline paired by round; returns (ratio of medians, per-round ratios)."""
    b = {r["rep"]: metric(r, m) for r in base_runs}
    per = [metric(r, m) / b[r["rep"]] for r in runs if r["rep"] in b and b[r["rep"]]]
    v = [metric(r, m) for r in runs]
    bv = list(b.values())
    rm = med(v) / med(bv) if v and bv and med(bv) else None
    return rm, per


def ratio_cell(runs, base, m):
    rm, per = paired_ratios(runs, base, m)
    if rm is None:
        return "–"
    lo, hi = spread(per)
    return f"{rm:.3f} ({lo:.3f}–{hi:.3f})"


def load_results(out):
    with open(os.path.join(out, "results.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def select(rs, **kw):
    return [r for r in rs if ok(r) and all(r.get(k) == v for k, v in kw.items())]


def load_note(rs):
    loads = [r["load1"] for r in rs]
    if not loads:
        return ""
    return (f"1-minute load average before each run: median {med(loads):.2f}, "
            f"range {min(loads):.2f}–{max(loads):.2f} (nproc {os.cpu_count()}).")


def net_cpu_cell(runs, base, e_cfg, e_base):
    """Process CPU ratio after removing each configuration's fixed cost (its empty JVM run)."""
    ec = {r["rep"]: r["cpu_s"] for r in e_cfg}
    eb = {r["rep"]: r["cpu_s"] for r in e_base}
    b = {r["rep"]: r["cpu_s"] for r in base}
    per = [(r["cpu_s"] - ec[r["rep"]]) / (b[r["rep"]] - eb[r["rep"]]) for r in runs
           if r["rep"] in ec and r["rep"] in eb and r["rep"] in b and b[r["rep"]] > eb[r["rep"]]]
    if not per or not e_cfg or not e_base:
        return "–"
    num = med([r["cpu_s"] for r in runs]) - med(list(ec.values()))
    den = med(list(b.values())) - med(list(eb.values()))
    if den <= 0:
        return "–"
    return f"{num / den:.3f} ({min(per):.3f}–{max(per):.3f})"


def of(rs, jdk, cfg, w=None, part=None):
    return [r for r in rs if ok(r) and r["jdk"] == jdk and r["config"] == cfg
            and (w is None or r["class"].endswith("." + w)) and (part is None or r["part"] == part)]


def report_overhead(all_rs, L):
    rs = [r for r in all_rs if r["part"] == "overhead"]
    empty = [r for r in all_rs if r["part"] == "empty"]
    if not rs:
        return
    reps = max(r["rep"] for r in rs) + 1
    configs = [c for c in OVERHEAD_CONFIGS + ["other"] + list(BASELINE_CONFIGS)
               if any(r["config"] == c for r in rs)]
    prof = [c for c in configs if c != "none"]
    L.append(f"### Overhead: ratios against no profiler ({reps} rounds)\n")
    L.append(load_note(rs) + "\n")
    L.append("Each cell: ratio of the medians (min–max of the per-round ratios, each against the "
             "unprofiled run of the same round). Elapsed time (measured by the workload, work "
             "only) and p99 latency: lower is better, 1.000 = no cost; throughput: higher is "
             "better. Process CPU = user + system time of the whole JVM (wait4), which also counts "
             "start-up, the profiler's own threads and its dump at exit; \"fixed cost removed\" "
             "subtracts from each run the CPU of an empty JVM run (same configuration, same "
             "round), leaving what the profiler costs while the work runs.\n")
    fails = [r for r in rs + empty if not ok(r)]
    for jdk in sorted({r["jdk"] for r in rs}, key=int):
        L.append(f"**JDK {jdk}**\n")
        L.append("| workload | measure | " + " | ".join(CONFIG_TITLES[c] for c in prof) + " |")
        L.append("| --- | --- | " + " | ".join("---:" for _ in prof) + " |")
        for w in WORKLOADS:
            base = of(rs, jdk, "none", w)
            ms = [("elapsed_ms", "elapsed"), ("cpu_s", "process CPU"), ("net", "process CPU, "
                  "fixed cost removed")]
            if w == "Server":
                ms += [("throughput_rps", "throughput"), ("p99_us", "p99 latency")]
            for m, title in ms:
                row = []
                for c in prof:
                    runs = of(rs, jdk, c, w)
                    if m == "net":
                        row.append(net_cpu_cell(runs, base, of(empty, jdk, c), of(empty, jdk, "none")))
                    else:
                        row.append(ratio_cell(runs, base, m))
                L.append(f"| {w} | {title} | " + " | ".join(row) + " |")
        L.append("")
        L.append(f"Absolute figures, JDK {jdk} (median, min–max; \"empty JVM\" = the fixed cost: "
                 "start-up, profiler set-up, shutdown and dump of a JVM that runs one round of "
                 "CpuSingle):\n")
        L.append("| workload | configuration | elapsed ms | process CPU s | peak RSS MiB | "
                 "Server p50 / p99 / p999 µs | samples | handler mean / max µs |")
        L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for w in list(WORKLOADS) + ["empty JVM"]:
            for c in configs:
                runs = of(empty, jdk, c) if w == "empty JVM" else of(rs, jdk, c, w)
                if not runs:
                    continue
                el = [r["wall_s"] * 1e3 for r in runs] if w == "empty JVM" else [
                    metric(r, "elapsed_ms") for r in runs]
                lat = "–"
                if w == "Server":
                    lat = " / ".join(fmt(med([metric(r, k) for r in runs]), 0)
                                     for k in ("p50_us", "p99_us", "p999_us"))
                fx = [r["fx"] for r in runs if "fx" in r]
                samples = fmt(med([f["samples"] for f in fx]), 0) if fx else "–"
                hnd = "–"
                if fx:
                    hnd = (f"{med([f['handler_mean_ns'] for f in fx]) / 1e3:.1f} / "
                           f"{max(f['handler_max_ns'] for f in fx) / 1e3:.0f}")
                L.append(f"| {w} | {CONFIG_TITLES[c]} | {cell(el, 0)} | "
                         f"{cell([r['cpu_s'] for r in runs], 2)} | "
                         f"{fmt(med([metric(r, 'maxrss_mb') for r in runs]), 0)} | {lat} | "
                         f"{samples} | {hnd} |")
        L.append("")
    if fails:
        L.append(f"{len(fails)} runs failed and are left out: " +
                 "; ".join(f"{r['config']} {r['class']} jdk{r['jdk']}" for r in fails[:10]) + "\n")


def report_cost(rs, L, plots):
    rs = [r for r in rs if r["part"] == "cost"]
    if not rs:
        return
    L.append("### Per-sample cost vs stack depth (DeepStack, one stack)\n")
    L.append(load_note(rs) + "\n")
    L.append("Handler: the agent's own figure (meta.extra `mean CPU ns in handler per signal`: "
             "thread CPU time from the handler's entry to its end, i.e. the thread lookup "
             "(gettid), AsyncGetCallTrace and the ring push, less the cost of the two clock reads "
             "that time it, measured on 1 signal in 16); median over runs (min–max), and "
             "the largest single-signal maximum. Extra CPU per sample: (process CPU − process CPU "
             "of the unprofiled run of the same round) / samples, so it includes the kernel's "
             "signal delivery, the drain thread and the dump.\n")
    L.append("| JDK | interval | depth | samples | handler mean µs | handler max µs | "
             "extra process CPU per sample µs | elapsed ratio |")
    L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    series = {}
    for jdk in sorted({r["jdk"] for r in rs}, key=int):
        for c in ("fx-cpu-10ms", "fx-cpu-1ms", "fx-timer-10ms", "fx-cpu-1ms-ring64k"):
            for d in (10, 100, 1000):
                arg = f"depth={d}"
                runs = [r for r in select(rs, jdk=jdk, config=c) if arg in r["args"] and "fx" in r]
                base = [r for r in select(rs, jdk=jdk, config="none") if arg in r["args"]]
                if not runs:
                    continue
                hm = [r["fx"]["handler_mean_ns"] / 1e3 for r in runs]
                hx = max(r["fx"]["handler_max_ns"] for r in runs) / 1e3
                bcpu = {r["rep"]: r["cpu_s"] for r in base}
                per = [(r["cpu_s"] - bcpu[r["rep"]]) / r["fx"]["samples"] * 1e6 for r in runs
                       if r["rep"] in bcpu and r["fx"]["samples"]]
                samples = med([r["fx"]["samples"] for r in runs])
                L.append(f"| {jdk} | {CONFIG_TITLES[c][8:]} | {d} | {fmt(samples, 0)} | "
                         f"{cell(hm, 1)} | {hx:.0f} | {cell(per, 1)} | "
                         f"{ratio_cell(runs, base, 'elapsed_ms')} |")
                series.setdefault(f"JDK {jdk}, {CONFIG_TITLES[c][8:]}", []).append((d, med(hm)))
    L.append("")
    plots.append(("handler_depth", "Signal handler CPU time per sample vs stack depth",
                  "stack depth (frames)", "mean handler time per sample (µs)", True, series))


def report_threads(rs, L, plots):
    rs = [r for r in rs if r["part"] == "threads"]
    if not rs:
        return
    L.append("### Overhead and memory vs number of threads (ManyThreads, 1 busy thread)\n")
    L.append(load_note(rs) + "\n")
    L.append("Ratios against no profiler (median of the per-round medians ratio, min–max of the "
             "per-round ratios); RSS increment = peak RSS with the agent − without, medians.\n")
    L.append("| JDK | threads | mode | elapsed ratio | process CPU ratio | samples | "
             "RSS increment MiB |")
    L.append("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    cpu_series, rss_series = {}, {}
    for jdk in sorted({r["jdk"] for r in rs}, key=int):
        for n in (1, 10, 100, 500):
            arg = f"threads={n}"
            base = [r for r in select(rs, jdk=jdk, config="none") if arg in r["args"]]
            for c in ("fx-cpu-10ms", "fx-wall-10ms"):
                runs = [r for r in select(rs, jdk=jdk, config=c) if arg in r["args"]]
                if not runs or not base:
                    continue
                rss = med([metric(r, "maxrss_mb") for r in runs]) - med(
                    [metric(r, "maxrss_mb") for r in base])
                samples = med([r["fx"]["samples"] for r in runs if "fx" in r])
                L.append(f"| {jdk} | {n} | {CONFIG_TITLES[c][8:]} | "
                         f"{ratio_cell(runs, base, 'elapsed_ms')} | "
                         f"{ratio_cell(runs, base, 'cpu_s')} | {fmt(samples, 0)} | {rss:.1f} |")
                label = f"JDK {jdk}, {CONFIG_TITLES[c][8:]}"
                rm, _ = paired_ratios(runs, base, "cpu_s")
                cpu_series.setdefault(label, []).append((n, (rm - 1) * 100))
                rss_series.setdefault(label, []).append((n, rss))
    L.append("")
    plots.append(("overhead_threads", "Process CPU overhead vs threads (1 busy, rest idle)",
                  "threads", "extra process CPU (%)", True, cpu_series))
    plots.append(("memory_threads", "Peak RSS with the agent minus without, vs threads",
                  "threads", "RSS increment (MiB)", True, rss_series))


def report_interval(rs, L, plots):
    rs = [r for r in rs if r["part"] == "interval"]
    if not rs:
        return
    L.append("### Overhead vs interval (Server)\n")
    L.append(load_note(rs) + "\n")
    L.append("| JDK | interval | engine | effective interval ms | samples | elapsed ratio | "
             "process CPU ratio | throughput ratio | p99 ratio |")
    L.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    el_series, cpu_series = {}, {}
    ivs = {"fx-cpu-10ms": 10.0, "fx-cpu-1ms": 1.0, "fx-cpu-100us": 0.1}
    for jdk in sorted({r["jdk"] for r in rs}, key=int):
        base = select(rs, jdk=jdk, config="none")
        for c, iv in ivs.items():
            runs = select(rs, jdk=jdk, config=c)
            if not runs:
                continue
            fx = [r["fx"] for r in runs if "fx" in r]
            eng = fx[0]["engine"].split(":")[0] + (
                " (perf)" if "perf_events" in fx[0]["engine"] else " (timer_create)") if fx else "–"
            L.append(f"| {jdk} | {CONFIG_TITLES[c][12:]} | {eng} | "
                     f"{fmt(med([f['interval_eff_ms'] for f in fx if f['interval_eff_ms']]), 3)} | "
                     f"{fmt(med([f['samples'] for f in fx]), 0)} | "
                     f"{ratio_cell(runs, base, 'elapsed_ms')} | {ratio_cell(runs, base, 'cpu_s')} | "
                     f"{ratio_cell(runs, base, 'throughput_rps')} | "
                     f"{ratio_cell(runs, base, 'p99_us')} |")
            rm, _ = paired_ratios(runs, base, "elapsed_ms")
            el_series.setdefault(f"JDK {jdk}, elapsed", []).append((iv, (rm - 1) * 100))
            rm, _ = paired_ratios(runs, base, "cpu_s")
            el_series.setdefault(f"JDK {jdk}, process CPU", []).append((iv, (rm - 1) * 100))
    L.append("")
    plots.append(("overhead_interval", "Server: overhead vs sampling interval (cpu mode)",
                  "interval (ms)", "overhead (%)", True, el_series))


def report_length(rs, L, plots):
    rs = [r for r in rs if r["part"] == "length"]
    if not rs:
        return
    L.append("### Dump time, file size and memory vs recording length (DeepStack depth 100, "
             "2 threads, cpu 200 µs)\n")
    L.append(load_note(rs) + "\n")
    L.append("Dump time: the time from the workload's end to the JVM's exit, minus the same for "
             "the unprofiled run (same length, same round): the agent's stop, final drain and "
             "write of the .json.gz. variety=1: every sample has the same stack; variety=4: "
             "nearly every sample a new 100-frame stack (the stack table grows by ~100 rows per "
             "sample: the worst case). RSS increment: peak RSS with − without the agent.\n")
    L.append("| JDK | stacks | descents per thread | samples | stack table rows | file KiB | "
             "bytes/sample | dump time ms | model MiB | RSS increment MiB | ring drops | "
             "samples as [stack table full] |")
    L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    dump_series, size_series, mem_series = {}, {}, {}
    for jdk in sorted({r["jdk"] for r in rs}, key=int):
        for variety in (1, 4):
            va = f"variety={variety}"
            scales = sorted({next(int(a.split("=")[1]) for a in r["args"]
                                  if a.startswith("descents=")) for r in rs})
            for desc in scales:
                da = f"descents={desc}"
                runs = [r for r in select(rs, jdk=jdk, config="fx-cpu-200us")
                        if va in r["args"] and da in r["args"] and "fx" in r]
                base = [r for r in select(rs, jdk=jdk, config="none")
                        if va in r["args"] and da in r["args"]]
                if not runs or not base:
                    continue
                bshut = {r["rep"]: r["shutdown_ms"] for r in base}
                dump = [r["shutdown_ms"] - bshut[r["rep"]] for r in runs if r["rep"] in bshut]
                samples = med([r["fx"]["samples"] for r in runs])
                rows = med([r["fx"]["stack_rows"] or 0 for r in runs])
                size = med([r["fx_file_bytes"] for r in runs])
                rss = med([metric(r, "maxrss_mb") for r in runs]) - med(
                    [metric(r, "maxrss_mb") for r in base])
                drops = med([r["fx"]["drops"] or 0 for r in runs])
                full = med([r["fx"].get("table_full") or 0 for r in runs])
                model = [r["fx"].get("model_mib") for r in runs if r["fx"].get("model_mib")]
                kind = "one" if variety == 1 else "unique"
                L.append(f"| {jdk} | {kind} | {desc} | {fmt(samples, 0)} | {fmt(rows, 0)} | "
                         f"{size / 1024:,.0f} | {size / samples if samples else 0:.1f} | "
                         f"{cell(dump, 0)} | {fmt(med(model), 1) if model else '–'} | {rss:.1f} | "
                         f"{fmt(drops, 0)} | {fmt(full, 0)} |")
                label = f"JDK {jdk}, {kind} stack{'s' if variety == 4 else ''}"
                dump_series.setdefault(label, []).append((samples, med(dump)))
                size_series.setdefault(label, []).append((samples, size / 1e6))
                mem_series.setdefault(label, []).append((samples, rss))
    L.append("")
    plots.append(("dump_length", "Dump time vs recording length", "samples in the profile",
                  "dump time (ms)", False, dump_series))
    plots.append(("size_length", "Profile size vs recording length", "samples in the profile",
                  "file size (MB, .json.gz)", False, size_series))
    plots.append(("memory_length", "Peak RSS increment vs recording length",
                  "samples in the profile", "RSS with − without agent (MiB)", False, mem_series))


def report_accuracy(rs, L):
    rs = [r for r in rs if r["part"] == "accuracy"]
    if not rs:
        return
    L.append("### Accuracy: demo worker-1, alpha/beta/gamma = 50/30/20 % of its CPU\n")
    L.append(load_note(rs) + "\n")
    L.append("fxagent (cpu, 10 ms) and JFR (`settings=profile`, jdk.ExecutionSample every 10 ms) "
             "in the same JVM. Shares: inclusive samples of each method among the samples in any "
             "of the three; truth: the demo's own thread-CPU-clock split of the same run. Error: "
             "the largest |share − truth| of the three, in percentage points.\n")
    L.append("| JDK | run | truth α/β/γ % | fxagent α/β/γ % (samples) | fxagent error pp | "
             "JFR α/β/γ % (samples) | JFR error pp |")
    L.append("| --- | ---: | --- | --- | ---: | --- | ---: |")
    for jdk in sorted({r["jdk"] for r in rs}, key=int):
        errs = {"fx": [], "jfr": []}
        for r in sorted(select(rs, jdk=jdk), key=lambda r: r["rep"]):
            truth = r.get("truth")
            if not truth:
                continue
            cells = []
            for who in ("fx", "jfr"):
                c = r.get(f"{who}_counts")
                tot = sum(c.values()) if c else 0
                if not tot:
                    cells += [r.get(f"{who}_err") or "no samples", "–"]
                    continue
                sh = {m: 100.0 * c[m] / tot for m in METHODS}
                err = max(abs(sh[m] - truth[m]) for m in METHODS)
                errs[who].append(err)
                cells += ["/".join(f"{sh[m]:.1f}" for m in METHODS) + f" ({tot:.0f})",
                          f"{err:.1f}"]
            L.append(f"| {jdk} | {r['rep'] + 1} | " + "/".join(f"{truth[m]:.1f}" for m in METHODS)
                     + " | " + " | ".join(cells) + " |")
        L.append(f"| {jdk} | **median** | | | **{fmt(med(errs['fx']), 1)}** | | "
                 f"**{fmt(med(errs['jfr']), 1)}** |")
    L.append("")


def machine(ctx_jdks):
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = int(next(line for line in f if line.startswith("MemTotal")).split()[1]) / 1048576
    un = os.uname()
    lines = [f"- CPU: {cpu}, nproc {os.cpu_count()}; RAM {mem:.1f} GiB; kernel {un.sysname} "
             f"{un.release}; perf_event_paranoid "
             f"{open('/proc/sys/kernel/perf_event_paranoid').read().strip()}"]
    for major, home in ctx_jdks:
        v = subprocess.run([os.path.join(home, "bin", "java"), "-version"], capture_output=True,
                           text=True).stderr.splitlines()
        lines.append(f"- JDK {major}: {home} ({v[1].strip() if len(v) > 1 else '?'})")
    return "\n".join(lines)


# ---------------------------------------------------------------- plots

def gnuplot(plots, outdir, workdir):
    if not shutil.which("gnuplot") or not plots:
        return []
    os.makedirs(outdir, exist_ok=True)
    made = []
    for name, title, xl, yl, logx, series in plots:
        if not series:
            continue
        cmds = ["set terminal pngcairo size 800,520 font 'sans,10'" if gp_has_cairo()
                else "set terminal png size 800,520",
                f"set output '{os.path.join(outdir, name + '.png')}'",
                f"set title \"{title}\"", f"set xlabel \"{xl}\"", f"set ylabel \"{yl}\"",
                "set termoption noenhanced", "set grid", "set key below",
                "set yrange [*:*]"]
        if logx:
            cmds.append("set logscale x")
        parts = []
        for i, (label, pts) in enumerate(sorted(series.items())):
            dat = os.path.join(workdir, f"{name}-{i}.dat")
            with open(dat, "w") as f:
                for x, y in sorted(p for p in pts if p[1] is not None):
                    f.write(f"{x} {y}\n")
            parts.append(f"'{dat}' using 1:2 with linespoints title \"{label}\"")
        cmds.append("plot " + ", ".join(parts))
        p = subprocess.run(["gnuplot"], input="\n".join(cmds) + "\n", text=True,
                           capture_output=True)
        if p.returncode == 0:
            made.append(name + ".png")
        else:
            print(f"gnuplot failed for {name}: {p.stderr.strip()[:300]}", file=sys.stderr)
    return made


_CAIRO = None


def gp_has_cairo():
    global _CAIRO
    if _CAIRO is None:
        p = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
        _CAIRO = "pngcairo" in (p.stdout + p.stderr)
    return _CAIRO


def report(out, jdks, plots_dir, header):
    rs = load_results(out)
    L, plots = [header, ""], []
    report_overhead(rs, L)
    report_cost(rs, L, plots)
    report_threads(rs, L, plots)
    report_interval(rs, L, plots)
    report_length(rs, L, plots)
    report_accuracy(rs, L)
    made = gnuplot(plots, plots_dir, out) if plots_dir else []
    if made:
        L.append("Plots: " + ", ".join(f"`{os.path.join(plots_dir, m)}`" for m in made) + "\n")
    text = "\n".join(L)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text + "\n")
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for results.jsonl, report.md, files/")
    ap.add_argument("--jdk", action="append", help="MAJOR=HOME (repeatable)")
    ap.add_argument("--agent", help="libfxagent.so")
    ap.add_argument("--jar", help="fxagent-bench.jar")
    ap.add_argument("--demo-jar", help="fxagent-demo.jar")
    ap.add_argument("--fxcheck", help="the fxcheck tool")
    ap.add_argument("--parts", default="overhead,cost,scaling,accuracy")
    ap.add_argument("--reps", type=int, default=5, help="rounds of the overhead part")
    ap.add_argument("--reps-small", type=int, default=3, help="rounds of the other parts")
    ap.add_argument("--scale", type=float, default=1.0, help="work multiplier")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--baseline-agent", help="another libfxagent.so, run as base-cpu-10ms/1ms")
    ap.add_argument("--configs", help="comma-separated subset of the overhead part's configurations")
    ap.add_argument("--keep", action="store_true", help="keep every profile and recording")
    ap.add_argument("--plots", help="directory for the PNG plots (e.g. docs/bench)")
    ap.add_argument("--header", default="", help="text put above the tables")
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    ctx = Ctx(a)
    header = a.header or "\n".join(["### Machine and command", "", machine(ctx.jdks)])
    if not a.report_only:
        parts = a.parts.split(",")
        t0 = time.monotonic()
        for name, fn in (("overhead", part_overhead), ("cost", part_cost),
                         ("scaling", part_scaling), ("accuracy", part_accuracy)):
            if name in parts:
                print(f"== {name} ({time.monotonic() - t0:.0f} s so far)", file=sys.stderr)
                fn(ctx)
        print(f"== done in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    report(a.out, ctx.jdks, a.plots, header)


if __name__ == "__main__":
    main()
