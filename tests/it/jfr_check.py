# SPDX-License-Identifier: Apache-2.0
"""fxprof convert REC.jfr against the JDK's own reader (issue 35, tests/it/jfr_test.sh).

usage: jfr_check.py PROFILE SUMMARY.txt (PRINT.json | --counts-only) [--label NAME]
  PROFILE      what fxprof convert wrote from the recording
  SUMMARY.txt  `jfr summary REC` of the same recording
  PRINT.json   `jfr print --json --stack-depth 4096 --events
               jdk.ExecutionSample,jdk.NativeMethodSample,jdk.ObjectAllocationSample REC`

Checks, each failure counted:
  - with --interval-ms, meta.interval (jdk.ExecutionSample's period from jdk.ActiveSetting);
  - every event type's count in Profile Info ("JFR events") equals jfr summary's, both ways;
  - per thread (matched by OS thread id), the execution samples, the native method samples and
    (JDK 25) the CPU-time samples (on the track "NAME (CPU time)") equal jfr print's events of
    that thread;
  - per thread, the multiset of stacks equals jfr print's, frame by frame (leaf first: the
    method as pkg.Class.method, its line, its frame type as the Java subcategory), for every
    event, not a sample of them; the [state: IN_NATIVE] leaf of a native method sample and the
    [JFR: no stack trace] root of an event without a stack are the converter's own and set
    aside, and the root that says the recording truncated the stack
    must be there exactly when jfr print says the stack was truncated;
  - one marker per event of jdk.ThreadPark, JavaMonitorEnter, JavaMonitorWait, ThreadSleep
    and GarbageCollection, named as the type (their count equals jfr summary's);
  - per thread, the allocation samples, the sum of their weights (bytes) and the multiset of
    their stacks with the allocated class (as Java names it) as leaf (with --async-profiler its
    TLAB events are allocations too; the JDK's own are not);
  - one marker per event of VirtualThreadPinned, the GC phases, Compilation, MethodTrace,
    MethodTiming and OldObjectSample as well; for those of MARKER_KEYS that PRINT.json holds
    (jfr_test.sh asks for PRINT_EVENTS), per thread the multiset of what the marker says (the
    method, its invocations and times, the collector and cause, the old object's class, size and
    age...) and of its stack equals jfr print's events';
  - the counters: heap used and committed, one value per jdk.GCHeapSummary, and the CPU load
    (JVM user, system, machine total, whole percent), one per jdk.CPULoad, equal jfr print's;
  - with --require, jfr summary counts at least one event of each type named.
"""
import argparse
import collections
import gzip
import json
import math
import re
import struct
import sys

import profile_lib as pl

NATIVE_LEAF = "[state: IN_NATIVE]"
CPU_SUFFIX = " (CPU time)"  # the track of a thread's JDK 25 CPU-time samples
TRUNCATED = "[JFR: stack truncated (the recording's stackdepth)]"
# an event without a thread: the converter's track of that name, tid 0
NO_THREAD = {"osThreadId": 0, "javaName": "[JFR: unknown thread]"}
NO_STACK = "[JFR: no stack trace]"  # the root of an event without a stack (jfr print: none)
MARKER_TYPES = ("jdk.ThreadPark", "jdk.JavaMonitorEnter", "jdk.JavaMonitorWait",
                "jdk.ThreadSleep", "jdk.GarbageCollection", "jdk.VirtualThreadPinned",
                "jdk.GCPhasePause", "jdk.GCPhasePauseLevel1", "jdk.GCPhasePauseLevel2",
                "jdk.GCPhasePauseLevel3", "jdk.GCPhasePauseLevel4", "jdk.GCPhaseConcurrent",
                "jdk.GCPhaseConcurrentLevel1", "jdk.GCPhaseConcurrentLevel2", "jdk.Compilation",
                "jdk.MethodTrace", "jdk.MethodTiming", "jdk.OldObjectSample")
# the markers compared event by event with jfr print's (when PRINT.json holds them): per thread
# of the event (None: GC and method timing, on the main track), the multiset of their stacks
# and of what the marker says of the event, as jfr print says it
MARKER_KEYS = {
    "jdk.JavaMonitorEnter": ("eventThread", lambda v: (class_name(v["monitorClass"]),),
                             lambda d: (d["detail"],)),
    "jdk.ThreadPark": ("eventThread", lambda v: (class_name(v["parkedClass"]),),
                       lambda d: (d["detail"],)),
    "jdk.GarbageCollection": (None, lambda v: (v["name"], v["cause"]),
                              lambda d: (d["collector"], d["gcCause"])),
    **{t: (None, lambda v: (v["name"], v["gcId"]), lambda d: (d["phase"], d["gcId"]))
       for t in ("jdk.GCPhasePause", "jdk.GCPhasePauseLevel1", "jdk.GCPhaseConcurrent",
                 "jdk.GCPhaseConcurrentLevel1", "jdk.GCPhaseConcurrentLevel2")},
    "jdk.Compilation": ("eventThread", lambda v: (method(v["method"]), v["compileLevel"],
                                                  v["succeded"], v["isOsr"], v["codeSize"],
                                                  v["compileId"]),
                        lambda d: (d["method"], d["level"], d["succeeded"] == "yes",
                                   d["osr"] == "yes", d["codeSize"], d["compileId"])),
    "jdk.VirtualThreadPinned": ("eventThread", lambda v: (v["blockingOperation"],
                                                          v["pinnedReason"],
                                                          v["carrierThread"]["osName"]),
                                lambda d: (d["operation"], d["reason"], d["carrier"])),
    "jdk.MethodTrace": ("eventThread", lambda v: (method(v["method"]),),
                        lambda d: (d["method"],)),
    "jdk.MethodTiming": (None, lambda v: (method(v["method"]), v["invocations"],
                                          round(iso_ms(v["minimum"]), 3),
                                          round(iso_ms(v["average"]), 3),
                                          round(iso_ms(v["maximum"]), 3)),
                         lambda d: (d["method"], d["invocations"], round(d["minimum"], 3),
                                    round(d["average"], 3), round(d["maximum"], 3))),
    "jdk.OldObjectSample": ("eventThread", lambda v: (java_name(v["object"]["type"]["name"]),
                                                      v.get("objectSize", 0),  # JDK 17: none
                                                      round(iso_ms(v["objectAge"]), 3)),
                            lambda d: (d["objectClass"], d["objectSize"],
                                       round(d["objectAge"], 3))),
}
def pct(x):
    """A float field in whole percent as the converter rounds it: JFR's float (jfr print writes
    0.005 for the float 0.004999999888), times 100, rounded half up."""
    return math.floor(struct.unpack("f", struct.pack("f", x))[0] * 100 + .5)


# the counters: name -> (event type, its value as the converter writes it: CPU in whole percent)
COUNTERS = {
    "Java heap used": ("jdk.GCHeapSummary", lambda v: v["heapUsed"]),
    "Java heap committed": ("jdk.GCHeapSummary", lambda v: v["heapSpace"]["committedSize"]),
    "JVM user CPU (% of all CPUs)": ("jdk.CPULoad", lambda v: pct(v["jvmUser"])),
    "JVM system CPU (% of all CPUs)": ("jdk.CPULoad",
                                       lambda v: pct(v["jvmSystem"])),
    "Machine total CPU (% of all CPUs)": ("jdk.CPULoad",
                                          lambda v: pct(v["machineTotal"])),
}
MARKER_EVENTS = ",".join(MARKER_KEYS)
PRINT_EVENTS = MARKER_EVENTS + ",jdk.GCHeapSummary,jdk.CPULoad"  # what jfr_test.sh asks for
ALLOC_TYPES = ("jdk.ObjectAllocationSample", "jdk.ObjectAllocationInNewTLAB",
               "jdk.ObjectAllocationOutsideTLAB")
SAMPLE_TYPES = ("jdk.ExecutionSample", "jdk.NativeMethodSample", "jdk.CPUTimeSample") + ALLOC_TYPES
# JFR's frame type -> the Java subcategory; async-profiler's "JIT compiled" is C2 beside its
# "C1 compiled", and its Native, C++ and Kernel frames are a library's (LIB_FRAMES): the
# symbol, in category Native or Kernel
SUBCAT = {"Interpreted": "Interpreted", "JIT compiled": "Other", "Inlined": "Inlined",
          "Native": "Native method", "C1 compiled": "JIT (C1)"}
LIB_FRAMES = {"C++": "Native", "Kernel": "Kernel"}
ASYNC_PROFILER = False  # --async-profiler


def alloc_bytes_of(ev):
    """What the converter weighs an allocation event: its weight; (async-profiler's) a new TLAB's
    size; its size."""
    v = ev["values"]
    return v.get("weight") or v.get("tlabSize") or v["allocationSize"]


def summary_counts(path):
    counts = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\s+(\S+)\s+(\d+)\s+(\d+)\s*$", line)
            if m and m.group(1) != "Event":
                counts[m.group(1)] = int(m.group(2))
    return counts


def class_name(c):
    """jfr print's Class as the converter names it (java.lang.String, byte[]), "" for null."""
    return java_name(c["name"]) if c else ""


def method(m):
    """jfr print's Method as the converter names it: pkg.Class.method."""
    return m["type"]["name"].replace("/", ".") + "." + m["name"]


def iso_ms(text):
    """jfr print's duration (PT0.047S, PT1M2.5S) in ms."""
    m = re.fullmatch(r"(-?)PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", text)
    if not m:
        raise ValueError(f"not a jfr print duration: {text}")
    ms = (int(m.group(2) or 0) * 3600 + int(m.group(3) or 0) * 60 + float(m.group(4) or 0)) * 1e3
    return -ms if m.group(1) else ms


def jfr_frames(ev):
    st = ev["values"].get("stackTrace") or {}
    out = []
    for fr in st.get("frames") or []:
        m, ftype = fr["method"], fr.get("type")
        lib = LIB_FRAMES.get(ftype) or (ASYNC_PROFILER and ftype == "Native" and "Native")
        if lib:
            out.append((m["name"], None, lib))
            continue
        name = m["type"]["name"].replace("/", ".") + "." + m["name"]
        line = fr.get("lineNumber")
        sub = "JIT (C2)" if ASYNC_PROFILER and ftype == "JIT compiled" else SUBCAT.get(ftype, "?")
        out.append((name, line if line and line > 0 else None, sub))
    return bool(st.get("truncated")), tuple(out)


def read_meta(path):
    """The profile's meta object alone: fxprof's writer writes it first, {"meta":{...},"libs"...,
    so the text up to ',"libs":' is read, not the whole profile."""
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    text = ""
    with opener(path, "rt", encoding="utf-8") as f:
        while ',"libs":' not in text:
            block = f.read(1 << 20)
            if not block:
                raise SystemExit(f"{path}: no meta followed by libs")
            text += block
    return json.loads(text[:text.index(',"libs":')] + "}")


def meta_only(ck, a):
    """--meta-only: Profile Info's count of every event type against jfr summary's."""
    theirs = {k.replace("jdk.Checkpoint", "jdk.CheckPoint"): v
              for k, v in summary_counts(a.summary).items() if v > 0}
    ours = pl.extra_groups(read_meta(a.profile)).get("JFR events", {})
    ck.check(len(theirs) >= 3, f"jfr summary lists {len(theirs)} event types with events")
    for name in sorted(set(theirs) | set(ours)):
        ck.check(theirs.get(name, 0) == ours.get(name, 0),
                 f"{name}: jfr summary {theirs.get(name, 0)}, profile {ours.get(name, 0)}")
    sys.exit(ck.exit_code())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("summary")
    ap.add_argument("print_json", nargs="?")
    ap.add_argument("--counts-only", action="store_true", help="only the counts per event type")
    ap.add_argument("--meta-only", action="store_true",
                    help="with --counts-only: only Profile Info's counts, read from the profile's "
                         "meta alone (a GB-sized profile does not fit in Python's memory)")
    ap.add_argument("--interval-ms", type=float, help="the profile's meta.interval must be this")
    ap.add_argument("--min-cpu", type=int, default=0,
                    help="jfr print must hold at least this many CPU-time samples")
    ap.add_argument("--min-allocs", type=int, default=0,
                    help="jfr print must hold at least this many allocation samples")
    ap.add_argument("--marker-types", default="",
                    help="these marker types (of MARKER_KEYS) must be in PRINT.json, events "
                    "and all, when jfr summary counts any")
    ap.add_argument("--min-threads", type=int, default=2,
                    help="jfr print must hold samples of at least this many threads")
    ap.add_argument("--require", default="",
                    help="event types jfr summary must count at least one of (comma-separated)")
    ap.add_argument("--label", default="jfr_check")
    ap.add_argument("--async-profiler", action="store_true",
                    help="async-profiler wrote the recording: its frame types")
    a = ap.parse_args()
    global ASYNC_PROFILER
    ASYNC_PROFILER = a.async_profiler
    ck = pl.Checker(a.label, True)
    if a.meta_only:
        meta_only(ck, a)
    prof = pl.Profile(a.profile)

    # 1. counts per event type
    # the constant pool events are jdk.CheckPoint to JDK 17's jfr, jdk.Checkpoint to 25's
    theirs = {k.replace("jdk.Checkpoint", "jdk.CheckPoint"): v
              for k, v in summary_counts(a.summary).items() if v > 0}
    ours = pl.extra_groups(prof.doc).get("JFR events", {})
    ck.check(len(theirs) >= 3, f"jfr summary lists {len(theirs)} event types with events")
    for name in sorted(set(theirs) | set(ours)):
        ck.check(theirs.get(name, 0) == ours.get(name, 0),
                 f"{name}: jfr summary {theirs.get(name, 0)}, profile {ours.get(name, 0)}")

    for name in filter(None, a.require.split(",")):
        ck.check(theirs.get(name, 0) > 0, f"{name}: the recording has {theirs.get(name, 0)} events,"
                 " at least 1")
    if a.interval_ms is not None:
        ck.check(prof.doc["meta"]["interval"] == a.interval_ms,
                 f"meta.interval {prof.doc['meta']['interval']} ms, the recording's period "
                 f"{a.interval_ms} ms")
    # markers: one per event of these types, named as the type, on some thread's track
    markers = collections.Counter()
    for t in prof.doc["threads"]:
        m = t["markers"]
        for i in range(m["length"]):
            markers[prof.strings[m["name"][i]]] += 1
    for name in MARKER_TYPES:
        ck.check(markers[name] == theirs.get(name, 0),
                 f"markers {name}: jfr summary {theirs.get(name, 0)}, profile {markers[name]}")
    if a.counts_only:
        sys.exit(ck.exit_code())

    # 2 and 3. per thread: counts and stacks
    events = pl.load_json(a.print_json)["recording"]["events"]
    want = collections.defaultdict(collections.Counter)  # tid -> (kind, frames) -> n
    names = {}
    allocs = collections.defaultdict(collections.Counter)  # tid -> (class, frames) -> n
    alloc_bytes = collections.Counter()
    marker_events = [ev for ev in events if ev["type"] in MARKER_KEYS]
    check_counters(ck, prof, events, theirs)
    events = [ev for ev in events if ev["type"] in SAMPLE_TYPES]
    for ev in events:
        if ev["type"] in ALLOC_TYPES[1:] and not ASYNC_PROFILER:
            continue  # the JDK's own TLAB events are counted only
        if ev["type"] in ALLOC_TYPES:
            th = ev["values"]["eventThread"] or NO_THREAD
            names[th["osThreadId"]] = th.get("javaName") or th.get("osName")
            cls = java_name(ev["values"]["objectClass"]["name"])
            allocs[th["osThreadId"]][(cls,) + jfr_frames(ev)] += 1
            alloc_bytes[th["osThreadId"]] += alloc_bytes_of(ev)
            continue
        cpu = ev["type"] == "jdk.CPUTimeSample"
        th = ev["values"]["eventThread" if cpu else "sampledThread"] or NO_THREAD
        tid = th["osThreadId"]
        names[tid] = th.get("javaName") or th.get("osName")
        kind = {"jdk.NativeMethodSample": "native", "jdk.CPUTimeSample": "cpu"}.get(ev["type"],
                                                                                  "exec")
        want[tid][(kind,) + jfr_frames(ev)] += 1
    ck.check(sum(sum(c.values()) for c in want.values()) == theirs.get("jdk.ExecutionSample", 0)
             + theirs.get("jdk.NativeMethodSample", 0) + theirs.get("jdk.CPUTimeSample", 0),
             "jfr print's samples are jfr summary's")
    got = collections.defaultdict(collections.Counter)
    for t in prof.doc["threads"]:
        for s in t["samples"]["stack"]:
            path = prof.path(s)[::-1]  # leaf first
            frames = [frame_key(prof, f) for f in path]
            kind = "cpu" if t["name"].endswith(CPU_SUFFIX) else "exec"
            if frames and frames[0][0] == NATIVE_LEAF:
                kind, frames = "native", frames[1:]
            if frames and frames[-1][0] == NO_STACK:
                frames = frames[:-1]
            truncated = bool(frames) and frames[-1][0] == TRUNCATED
            if truncated:
                frames = frames[:-1]
            got[t["tid"]][(kind, truncated, tuple(frames))] += 1
    ck.check(len(want) >= a.min_threads,
             f"jfr print has samples of {len(want)} threads, at least {a.min_threads}")
    for tid in sorted(set(want) | set(got), key=str):
        w, g = want.get(tid, collections.Counter()), got.get(tid, collections.Counter())
        label = f"thread {names.get(tid, '?')} (tid {tid})"
        for kind in ("exec", "native", "cpu"):
            nw = sum(n for key, n in w.items() if key[0] == kind)
            ng = sum(n for key, n in g.items() if key[0] == kind)
            ck.check(nw == ng, f"{label}: {kind} samples: jfr print {nw}, profile {ng}")
        diff = (w - g) + (g - w)
        ck.check(not diff, f"{label}: {len(w)} distinct stacks equal frame by frame"
                 + ("" if not diff else f"; first difference: {next(iter(diff))}"))
    n_cpu = sum(n for c in want.values() for key, n in c.items() if key[0] == "cpu")
    ck.check(n_cpu >= a.min_cpu, f"{n_cpu} CPU-time samples, at least {a.min_cpu}")
    n_allocs = sum(sum(c.values()) for c in allocs.values())
    ck.check(n_allocs >= a.min_allocs, f"{n_allocs} allocation samples, at least {a.min_allocs}")
    check_allocs(ck, prof, allocs, alloc_bytes, names)
    check_markers(ck, prof, marker_events, theirs, a.marker_types)
    sys.exit(ck.exit_code())


def check_counters(ck, prof, events, theirs):
    """Each counter of COUNTERS whose event type PRINT.json holds: one value per event, the
    values those of jfr print's events (as multisets: events at the same time may swap)."""
    have = {ev["type"] for ev in events}
    ours = prof.counters()
    for name, (etype, value) in COUNTERS.items():
        if etype not in have:
            continue
        want = sorted(value(ev["values"]) for ev in events if ev["type"] == etype)
        got = sorted(ours.get(name, []))
        ck.check(len(want) == theirs.get(etype, 0), f"{etype}: jfr print {len(want)}, "
                 f"jfr summary {theirs.get(etype, 0)}")
        ck.check(want == got, f"counter {name}: {len(got)} values, jfr print's {len(want)} "
                 f"{etype} events' ({want[:3]}...)"
                 + ("" if want == got else f"; profile {got[:3]}"))


def frame_key(prof, f):
    """A frame as jfr_frames gives one: its name, line and Java subcategory (a library's frame:
    its category)."""
    return prof.name[f], prof.line[f], prof.sub[f] if prof.cat[f] == "Java" else prof.cat[f]


def marker_frames(prof, data):
    """The stack of a marker (data.cause), as jfr_frames gives an event's: (truncated, frames)."""
    stack = (data.get("cause") or {}).get("stack")
    frames = [frame_key(prof, f) for f in prof.path(stack)[::-1]]
    truncated = bool(frames) and frames[-1][0] == TRUNCATED
    return truncated, tuple(frames[:-1] if truncated else frames)


def texts(prof, data):
    """A marker's data with its unique-string fields (string indexes, as the schema declares:
    a traced method's name is written once, not in each of millions of markers) as their text."""
    uniq = {f["key"] for s in prof.doc["meta"].get("markerSchema", []) if s["name"] == data.get("type")
            for f in s.get("fields", []) if f.get("format") == "unique-string"}
    return {k: prof.strings[v] if k in uniq and isinstance(v, int) else v for k, v in data.items()}


def check_markers(ck, prof, events, theirs, types):
    """Each type of MARKER_KEYS jfr print was asked for: per thread (its OS thread id and name,
    so virtual threads, all tid 0, are told apart; all on one side for the types without a
    thread), the multiset of (what the marker says, its stack)
    equals jfr print's events'."""
    seen = {ev["type"] for ev in events}
    for name in (types or "").split(","):
        if name in MARKER_KEYS:
            ck.check(name in seen or theirs.get(name, 0) == 0,
                     f"{name}: jfr print was asked for it and has {theirs.get(name, 0)} events")
    for name in sorted(seen):
        field, theirs_key, ours_key = MARKER_KEYS[name]
        want, got = collections.Counter(), collections.Counter()
        for ev in events:
            if ev["type"] == name:
                v = ev["values"]
                th = (v[field] or NO_THREAD) if field else {}
                who = (th["osThreadId"], th.get("javaName") or th.get("osName")) if field else None
                want[(who, theirs_key(v)) + jfr_frames(ev)] += 1
        for t in prof.doc["threads"]:
            for m in prof.markers(t, name):
                who = (t["tid"], pl.thread_name(t)) if field else None
                got[(who, ours_key(texts(prof, m["data"])))
                    + marker_frames(prof, m["data"])] += 1
        diff = (want - got) + (got - want)
        ck.check(not diff and want, f"markers {name}: {sum(want.values())} events, their "
                 f"threads, {len(want)} distinct values and stacks equal jfr print's"
                 + ("" if not diff else f"; first difference: {next(iter(diff))}"))


def java_name(name):
    """JFR's class name (java/lang/String, [B, [Ljava/lang/String;) as Java writes it."""
    dims = len(name) - len(name.lstrip("["))
    base = name[dims:]
    prim = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long",
            "S": "short", "Z": "boolean"}
    if dims:
        base = prim.get(base) or base[1:-1]
    return base.replace("/", ".") + "[]" * dims


def check_allocs(ck, prof, allocs, alloc_bytes, names):
    """Per thread: the allocation rows, their bytes and their stacks (the class as leaf)."""
    got = collections.defaultdict(collections.Counter)
    got_bytes = collections.Counter()
    for t in prof.doc["threads"]:
        na = t.get("nativeAllocations") or {"stack": [], "weight": []}
        for s, w in zip(na["stack"], na["weight"]):
            path = prof.path(s)[::-1]
            frames = [frame_key(prof, f) for f in path]
            if len(frames) > 1 and frames[-1][0] == NO_STACK:
                frames = frames[:-1]
            truncated = len(frames) > 1 and frames[-1][0] == TRUNCATED
            if truncated:
                frames = frames[:-1]
            got[t["tid"]][(frames[0][0], truncated, tuple(frames[1:]))] += 1
            got_bytes[t["tid"]] += w
    for tid in sorted(set(allocs) | set(got), key=str):
        label = f"thread {names.get(tid, '?')} (tid {tid})"
        w, g = allocs.get(tid, collections.Counter()), got.get(tid, collections.Counter())
        ck.check(sum(w.values()) == sum(g.values()) and alloc_bytes[tid] == got_bytes[tid],
                 f"{label}: allocation samples and bytes: jfr print {sum(w.values())}, "
                 f"{alloc_bytes[tid]}, profile {sum(g.values())}, {got_bytes[tid]}")
        diff = (w - g) + (g - w)
        ck.check(not diff, f"{label}: {len(w)} distinct allocation stacks and classes equal"
                 + ("" if not diff else f"; first difference: {next(iter(diff))}"))


if __name__ == "__main__":
    main()
