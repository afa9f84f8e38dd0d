# SPDX-License-Identifier: Apache-2.0
"""views_test.sh's checks (issue 30: one unit per view, the same figures in every output).
The reference is the Firefox profile read here on its own: per view its total (the mode's
samples, [idle] apart; lock waits and their ms; allocated and live bytes) and the part of known
code (the waits in waitOnMonitor/waitOnReentrantLock, the bytes of allocate(), the samples of
"views-busy"). Then:
  summary --json, its text first line and --view lock, collapsed --view cpu|lock|alloc|live and
  go tool pprof -raw/-top/-sample_index=delay give the same figures: exactly for counts, within
  rounding for ms (collapsed: 1 µs a line; pprof: 1 ns a sample) and bytes (1 a line or sample);
  known answers: the 6 known waits 1800 to 2700 ms (each >= 300 ms; a loaded machine stretches
  them), allocate()'s bytes within 20 % of what it allocated, views-busy's CPU and the whole
  profile's CPU within 20 % of the JVM's own (ThreadMXBean for the thread; for the profile the
  process's CPU time from main's start to its end, OperatingSystemMXBean; before main the JVM
  starts without the agent's samples).
usage: views_check.py RUN_DIR"""
import json
import os
import re
import sys

from profile_lib import Checker, Profile, thread_name

KNOWN_WAITS = ("waitOnMonitor", "waitOnReentrantLock")
ALLOCATE = "LockWorkload.allocate"
TOL = 0.20


def reference(p):
    """Per view the totals of the Firefox profile, and the known parts."""
    r = dict(samples=0, waits=0, ms=0.0, known_ms=0.0, alloc=0.0, allocs=0, allocate=0.0,
             live=0.0, busy=0, idle_waits=0, idle_ms=0.0)
    for t in p.doc["threads"]:
        s = t["samples"]
        w = s.get("weight") or [1] * s["length"]
        for st, wt in zip(s["stack"], w):
            if s.get("weightType") == "tracing-ms" and t["name"].endswith(": idle waits"):
                r["idle_waits"] += st is not None  # waiting for work: not lock waits
                r["idle_ms"] += wt
            elif s.get("weightType") == "tracing-ms":
                r["waits"] += st is not None
                r["ms"] += wt
                if st is not None and any(k in n for n in p.names(st) for k in KNOWN_WAITS):
                    r["known_ms"] += wt
            elif s.get("weightType", "samples") == "samples":
                if st is not None and p.names(st) == ["[idle]"]:
                    continue
                r["samples"] += wt
                r["busy"] += wt if thread_name(t) == "views-busy" else 0
        na = t.get("nativeAllocations")
        if not na:
            continue
        freed = {a for a, b in zip(na["memoryAddress"], na["weight"]) if b < 0}
        for st, b, a in zip(na["stack"], na["weight"], na["memoryAddress"]):
            if b <= 0:
                continue
            r["allocs"] += 1
            r["alloc"] += b
            r["live"] += b if a not in freed else 0
            if st is not None and any(ALLOCATE in n for n in p.names(st)):
                r["allocate"] += b
    return r


def collapsed(path, needle=None):
    total = lines = 0
    for line in open(path, encoding="utf-8"):
        stack, _, v = line.rstrip("\n").rpartition(" ")
        if needle is None or any(n in stack for n in needle):
            total += int(v)
            lines += 1
    return total, lines


def pprof_raw(path):
    """Per sample: its 10 values, its function names (leaf first) and its thread label."""
    text = open(path, encoding="utf-8").read()
    head, rest = text.split("\nSamples:\n", 1)
    types, rest = rest.split("\n", 1)
    samples_part, loc_part = rest.split("\nLocations\n", 1)
    locs = {int(m.group(1)): m.group(2) for m in
            re.finditer(r"^\s+(\d+): 0x0 M=\d+ (.+?) (\S*):(\d+) s=(\d+)$", loc_part, re.M)}
    out, lines = [], samples_part.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s+((?:\d+\s+){9}\d+): ([\d ]+)$", line)
        if m:
            label = re.search(r"thread:\[(.*)\]", lines[i + 1])
            out.append((list(map(int, m.group(1).split())),
                        [locs.get(int(x), "?") for x in m.group(2).split()],
                        label.group(1) if label else ""))
    return types.split(), out


def go_duration_ms(text):
    """go tool pprof -top's "Total samples = 1.20s" (or 547ms, 1750us) in ms."""
    m = re.search(r"Total samples = ([\d.]+)(ns|us|ms|s|mins|hrs)\b", text)
    if not m:
        return None
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3, "mins": 6e4, "hrs": 3.6e6}[m.group(2)]
    return float(m.group(1)) * scale


def near(a, b, tol):
    return b != 0 and abs(a - b) <= tol * abs(b)


def main():
    run = sys.argv[1]
    ck = Checker("views", True)
    p = Profile(os.path.join(run, "views.json.gz"))
    r = reference(p)
    interval_ns = p.doc["meta"]["interval"] * 1e6
    out = open(os.path.join(run, "views.out"), encoding="utf-8").read()
    allocated = int(re.search(r"^allocated bytes (\d+)$", out, re.M).group(1))
    busy_ns = int(re.search(r"^views-busy cpu ns (\d+)$", out, re.M).group(1))
    cpu0, cpu1 = map(int, re.search(r"^process cpu ns (\d+) (\d+)$", out, re.M).groups())
    print(f"profile: {r['samples']} CPU samples ({r['samples'] * interval_ns / 1e6:.0f} ms; "
          f"views-busy {r['busy']}), {r['waits']} lock waits {r['ms']:.1f} ms (known "
          f"{r['known_ms']:.1f} ms), {r['allocs']} allocation samples {r['alloc']:.0f} bytes "
          f"(allocate() {r['allocate']:.0f}), live {r['live']:.0f} bytes")
    print(f"JVM: process CPU {(cpu1 - cpu0) / 1e6:.0f} ms from main's start, views-busy "
          f"{busy_ns / 1e6:.0f} ms; allocate() allocated {allocated} bytes")
    ck.check(r["samples"] > 0 and r["waits"] > 0 and r["allocs"] > 0, "every view has figures")

    # fxprof summary --json, its text, --view lock
    s = json.load(open(os.path.join(run, "summary.json"), encoding="utf-8"))
    v = s["views"]
    ck.check(s["samples"] == r["samples"] and v["cpu"]["unit"] == "samples",
             f"summary --json samples {s['samples']} (unit {v['cpu']['unit']}), profile {r['samples']}")
    ck.check(v["lock"]["waits"] == r["waits"] and abs(v["lock"]["ms"] - r["ms"]) < 0.01
             and v["lock"]["unit"] == "ms",
             f"summary --json lock {v['lock']}, profile {r['waits']} waits {r['ms']:.3f} ms")
    ck.check(v["idlewait"]["waits"] == r["idle_waits"] and abs(v["idlewait"]["ms"] - r["idle_ms"]) < 0.01,
             f"summary --json idlewait {v['idlewait']}, profile {r['idle_waits']} waits "
             f"{r['idle_ms']:.3f} ms")
    ck.check(v["alloc"]["bytes"] == r["alloc"] and v["alloc"]["samples"] == r["allocs"]
             and v["live"]["bytes"] == r["live"] and v["alloc"]["unit"] == "bytes",
             f"summary --json alloc {v['alloc']} live {v['live']}, profile {r['alloc']:.0f} "
             f"live {r['live']:.0f}")
    first = open(os.path.join(run, "summary.txt"), encoding="utf-8").readline()
    for want in (f"{r['samples']} CPU samples", f"lock waits: {r['waits']} waits, {r['ms']:.1f} ms",
                 f"allocations: {r['allocs']} samples, {r['alloc']:.0f} bytes",
                 f"live at the end: {r['live']:.0f} bytes"):
        ck.check(want in first, f"summary's first line says '{want}': {first.strip()}")
    sl = json.load(open(os.path.join(run, "summary-lock.json"), encoding="utf-8"))
    ms = sum(t["samples"] for t in sl["threads"])
    waits = sum(t["waits"] for t in sl["threads"])
    ck.check(sl["unit"] == "ms" and abs(ms - r["ms"]) < 0.01 and waits == r["waits"],
             f"summary --view lock: {waits} waits {ms:.3f} ms over its threads")

    # collapsed, one view per file
    c = {view: collapsed(os.path.join(run, f"views-{view}.collapsed"))
         for view in ("cpu", "lock", "idlewait", "alloc", "live")}
    ck.check(c["cpu"][0] == r["samples"], f"collapsed cpu {c['cpu'][0]} samples")
    ck.check(abs(c["lock"][0] - r["ms"] * 1e3) <= c["lock"][1] + 1,
             f"collapsed lock {c['lock'][0]} us, profile {r['ms'] * 1e3:.0f}")
    ck.check(abs(c["idlewait"][0] - r["idle_ms"] * 1e3) <= c["idlewait"][1] + 1,
             f"collapsed idlewait {c['idlewait'][0]} us, profile {r['idle_ms'] * 1e3:.0f}")
    ck.check(abs(c["alloc"][0] - r["alloc"]) <= c["alloc"][1] + 1, f"collapsed alloc {c['alloc'][0]}")
    ck.check(abs(c["live"][0] - r["live"]) <= c["live"][1] + 1, f"collapsed live {c['live'][0]}")
    known, lines = collapsed(os.path.join(run, "views-lock.collapsed"), KNOWN_WAITS)
    ck.check(abs(known - r["known_ms"] * 1e3) <= lines + 1, f"collapsed known waits {known} us")

    # pprof through go tool pprof
    types, raw = pprof_raw(os.path.join(run, "pprof-raw.txt"))
    ck.check(types == ["samples/count", "cpu/nanoseconds[dflt]", "contentions/count",
                       "delay/nanoseconds", "alloc_objects/count", "alloc_space/bytes",
                       "inuse_objects/count", "inuse_space/bytes", "idle_waits/count",
                       "idle_delay/nanoseconds"], f"pprof sample types {types}")
    tot = [sum(x[0][i] for x in raw) for i in range(10)]
    n = len(raw)
    ck.check(tot[0] == r["samples"] and tot[1] == round(r["samples"] * interval_ns),
             f"pprof samples {tot[0]}, cpu {tot[1]} ns")
    ck.check(tot[2] == r["waits"] and abs(tot[3] - r["ms"] * 1e6) <= n,
             f"pprof contentions {tot[2]}, delay {tot[3]} ns")
    ck.check(tot[4] == r["allocs"] and abs(tot[5] - r["alloc"]) <= n
             and abs(tot[7] - r["live"]) <= n, f"pprof alloc {tot[4]} {tot[5]} bytes, inuse {tot[7]}")
    ck.check(tot[8] == r["idle_waits"] and abs(tot[9] - r["idle_ms"] * 1e6) <= n,
             f"pprof idle_waits {tot[8]}, idle_delay {tot[9]} ns")
    known_ns = sum(x[0][3] for x in raw if any(k in f for f in x[1] for k in KNOWN_WAITS))
    alloc_b = sum(x[0][5] for x in raw if any(ALLOCATE in f for f in x[1]))
    busy_cpu = sum(x[0][1] for x in raw if x[2] == "views-busy")
    ck.check(abs(known_ns - r["known_ms"] * 1e6) <= n and abs(alloc_b - r["allocate"]) <= n,
             f"pprof known waits {known_ns} ns, allocate() {alloc_b} bytes")
    top = open(os.path.join(run, "pprof-top.txt"), encoding="utf-8").read()
    ms = go_duration_ms(top)
    ck.check("Type: cpu" in top and ms is not None and near(ms, r["samples"] * interval_ns / 1e6, 0.01),
             f"go tool pprof -top: Type cpu, total {ms} ms")
    delay = open(os.path.join(run, "pprof-delay.txt"), encoding="utf-8").read()
    dms = go_duration_ms(delay)
    ck.check("Type: delay" in delay and dms is not None and near(dms, r["ms"], 0.01),
             f"go tool pprof -sample_index=delay: total {dms} ms")

    # known answers
    ck.check(1800 <= r["known_ms"] <= 2700, f"the 6 known waits: {r['known_ms']:.1f} ms")
    ck.check(near(alloc_b, allocated, TOL), f"allocate(): {alloc_b} bytes in pprof, {allocated} allocated")
    ck.check(near(busy_cpu, busy_ns, TOL), f"views-busy: {busy_cpu / 1e6:.0f} ms in pprof, "
                                           f"{busy_ns / 1e6:.0f} ms by ThreadMXBean")
    ck.check(near(tot[1], cpu1 - cpu0, TOL), f"pprof cpu {tot[1] / 1e6:.0f} ms, the JVM's "
                                             f"{(cpu1 - cpu0) / 1e6:.0f} ms from main's start")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
