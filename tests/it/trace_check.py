#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a profile of TraceWorkload (java-test/markers/fxagent/test/TraceWorkload.java, issue 33
item 4) in all three formats against the workload's known answer:
  Firefox  each thread's "Trace span" markers (schema TraceSpan) are exactly the spans it set,
           ids and labels included: trace-a spans a1 (tenant=acme) and a2 (none), trace-b span
           b7ad6b7169203331 (tenant=beta, route=/checkout), none elsewhere; every sample in a
           span's burn method lies inside one of that span's markers ([start, end), the range
           the Firefox Profiler selects for a marker), no sample of the free work
           (burnFreeA, burnFreeN) does, and at most 2 samples per span inside its markers are
           elsewhere (a sample inside set() once the context is published); meta.extra "Trace
           context" counts those markers, those samples, 3 labels and no loss;
  pprof    `go tool pprof -raw` of `fxprof convert --to pprof`: the samples/count summed per
           span_id label equal the Firefox samples inside that span's markers, with its trace_id
           and labels, and no sample of the free work has a span_id;
  OTLP     `protoc --decode` of `fxprof convert --to otlp`: the cpu profile's values per Link
           (trace id, span id bytes), in periods, equal the same counts, the Sample's attributes carry
           the labels, and samples of the free work have no link.
  CPU      with MS, each span's samples x interval are the MS ms of CPU the workload spent in it,
           within 30 % (CPU-time sampling; the known answer).
usage: trace_check.py PROFILE.json.gz PPROF_RAW.txt OTLP_DECODED.txt [MS]"""
import collections, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
from otlp_check import any_value, epoch_ns, firefox_views, load_profile, one, parse_text

TRACE_A = "0000000000000001000000000000000a"
TRACE_B = "0af7651916cd43dd8448eb211c80319c"
WANT = {  # span id -> (thread, trace id, labels, the method its work runs in)
    "00000000000000a1": ("trace-a", TRACE_A, {"tenant": "acme"}, "burnSpanA1"),
    "00000000000000a2": ("trace-a", TRACE_A, {}, "burnSpanA2"),
    "b7ad6b7169203331": ("trace-b", TRACE_B, {"tenant": "beta", "route": "/checkout"}, "burnSpanB"),
}
FREE = ("TraceWorkload.burnFreeA", "TraceWorkload.burnFreeN")
EPS = 0.0005  # ms: pfile_spans.c's

def fail(msg):
    print("FAIL: trace_check: " + msg, file=sys.stderr)
    sys.exit(1)

def tname(th):
    return re.sub(r" \(tid \d+(, #\d+)?\)$", "", th.get("name", ""))

def firefox(p):
    """The spans' markers per thread, checked; returns {span: samples inside its markers}."""
    spans = collections.defaultdict(list)  # span -> [(start, end)]
    for th in p["threads"]:
        m, name = th["markers"], tname(th)
        for i in range(m["length"]):
            d = m["data"][i]
            if not d or d.get("type") != "TraceSpan":
                continue
            sid = d["span_id"]
            if sid not in WANT: fail(f"{name}: a span {sid} the workload never set")
            wt, trace, labels, _ = WANT[sid]
            got = dict(l.split("=", 1) for l in (d.get(f"label{k}") for k in range(1, 5)) if l)
            if name != wt or d["trace_id"] != trace or got != labels:
                fail(f"span {sid} on {name}, trace {d['trace_id']}, labels {got}: expected {wt}, {trace}, {labels}")
            spans[sid].append((m["startTime"][i], m["endTime"][i]))
    if set(spans) != set(WANT): fail(f"span markers for {sorted(spans)}, expected {sorted(WANT)}")
    views, _ = firefox_views(p, False)
    # the observations' timestamps are epoch ns; the markers' ms from meta.startTime
    t0 = epoch_ns(p["meta"]["startTime"])
    interval_ns = p["meta"]["interval"] * 1e6
    inside = collections.Counter()
    for thread, _tid, frames, value, ts in views["cpu"]:
        ms = (ts - t0) / 1e6
        names = [f[0] for f in frames]
        # [start, end): what the Firefox Profiler selects for a marker holds each of its samples
        hit = [s for s, rs in spans.items() if WANT[s][0] == thread and any(a - EPS <= ms < b for a, b in rs)]
        if any(n.endswith(FREE) for n in names) and hit: fail(f"a sample of the free work on {thread} lies in span {hit[0]}")
        for sid, (wt, _, _, method) in WANT.items():
            runs = any(n.endswith("TraceWorkload." + method) for n in names)
            if runs and sid not in hit: fail(f"a sample of {method} lies outside span {sid}'s markers")
            if sid in hit:
                inside[sid] += round(value / interval_ns)  # the sample's weight
                inside["rows"] += 1
                if not runs: inside[sid + " elsewhere"] += 1
    extra = {e["label"]: e["value"] for g in p["meta"].get("extra", []) if g["label"] == "Trace context" for e in g["entries"]}
    want_extra = {"span markers": sum(len(r) for r in spans.values()), "samples with a context": inside["rows"],
                  "labels interned": 3, "losses": "none"}
    for k, v in want_extra.items():
        if extra.get(k) != v: fail(f'meta.extra "Trace context" {k!r} is {extra.get(k)!r}, the file says {v!r}')
    for sid in WANT:
        if inside[sid] < 10: fail(f"span {sid}: {inside[sid]} samples, expected at least 10")
        if inside[sid + " elsewhere"] > 2: fail(f"span {sid}: {inside[sid + ' elsewhere']} samples elsewhere than its method")
    return {s: inside[s] for s in WANT}

def pprof(raw, want):
    """go tool pprof -raw: samples, their labels and locations."""
    locs, samples, cur, section = {}, [], None, None
    for line in raw.splitlines():
        if line.startswith("Samples:"): section = "s"; continue
        if line.startswith("Locations"): section = "l"; continue
        if line.startswith("Mappings"): section = None; continue
        if section == "s":
            m = re.match(r"^\s+(\d+)\s+[\d\s]*:\s*([\d\s]*)$", line)
            if m:
                cur = {"n": int(m.group(1)), "locs": m.group(2).split(), "labels": {}}
                samples.append(cur)
                continue
            for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                if cur is not None: cur["labels"][k] = v
        elif section == "l":
            m = re.match(r"^\s+(\d+): (.*)$", line)
            if m: locs[m.group(1)] = m.group(2)
            elif locs and line.strip(): locs[list(locs)[-1]] += " " + line.strip()
    if not samples: fail("pprof: go tool pprof -raw shows no samples")
    per = collections.Counter()
    for s in samples:
        text = " ".join(locs.get(l, "") for l in s["locs"])
        sid = s["labels"].get("span_id")
        if any(f in text for f in FREE) and sid: fail(f"pprof: a sample of the free work has span_id {sid}")
        if sid is None: continue
        if sid not in WANT: fail(f"pprof: span_id {sid} the workload never set")
        wt, trace, labels, _ = WANT[sid]
        got = {k: v for k, v in s["labels"].items() if k not in ("thread", "trace_id", "span_id")}
        if s["labels"].get("trace_id") != trace or got != labels or not s["labels"].get("thread", "").startswith(wt):
            fail(f"pprof: a span {sid} sample labelled {s['labels']}")
        per[sid] += s["n"]
    if dict(per) != want: fail(f"pprof: samples per span_id {dict(per)}, the Firefox profile has {want}")
    return per

def otlp(text, want):
    req = parse_text(text)
    d = one(req, "dictionary")
    strs = d["string_table"]
    links = [(one(l, "trace_id").encode("utf-8", "surrogateescape").hex(),
              one(l, "span_id").encode("utf-8", "surrogateescape").hex()) for l in d["link_table"]]
    attrs = [(strs[one(x, "key_strindex", 0)], any_value(one(x, "value", {})) if x else None) for x in d["attribute_table"]]
    funcs = [strs[one(f, "name_strindex", 0)] for f in d["function_table"]]
    locs = [one(l["lines"][0], "function_index", 0) if l.get("lines") else 0 for l in d["location_table"]]
    stacks = [[funcs[locs[i]] for i in s.get("location_indices", [])] for s in d["stack_table"]]
    cpu = one(one(req, "resource_profiles"), "scope_profiles")["profiles"][0]
    period = one(cpu, "period", 0) or 1
    per = collections.Counter()
    for s in cpu.get("samples", []):
        a = dict(attrs[i] for i in s.get("attribute_indices", []))
        link = one(s, "link_index", 0)
        names = stacks[one(s, "stack_index", 0)]
        if any(n.endswith(FREE) for n in names) and link: fail("otlp: a sample of the free work has a link")
        if not link: continue
        trace, sid = links[link]
        if sid not in WANT: fail(f"otlp: link to span {sid} the workload never set")
        wt, wtrace, labels, _ = WANT[sid]
        got = {k: v for k, v in a.items() if k not in ("thread.name", "thread.id")}
        if trace != wtrace or got != labels or a.get("thread.name") != wt:
            fail(f"otlp: span {sid} sample with trace {trace}, attributes {a}")
        per[sid] += round(sum(s.get("values", [])) / period)  # weight x interval each
    if dict(per) != want: fail(f"otlp: observations per link {dict(per)}, the Firefox profile has {want}")

def main():
    if len(sys.argv) not in (4, 5): fail(__doc__)
    p = load_profile(sys.argv[1])
    want = firefox(p)
    if len(sys.argv) == 5:
        ms = float(sys.argv[4])
        for sid, n in want.items():
            got = n * p["meta"]["interval"]
            if abs(got - ms) > 0.3 * ms: fail(f"span {sid}: {got:.0f} ms of samples for {ms:.0f} ms of CPU")
    pprof(open(sys.argv[2]).read(), want)
    otlp(open(sys.argv[3], encoding="utf-8").read(), want)
    print(f"trace_check: samples per span {want} in the Firefox markers, pprof labels and OTLP links")

main()
