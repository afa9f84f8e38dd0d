#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks an OTLP ExportProfilesServiceRequest, as `protoc --decode` prints it, field by field
against the Firefox profile it was converted from (the same views computed here from the JSON,
independently of fxprof's C): the dictionary's zero entries, the resource's attributes, one
profile per view with its sample type, and every observation as (thread.name, thread.id, the
stack's function names, files and lines leaf first, value, timestamp), compared as multisets.
usage: otlp_check.py PROFILE.json[.gz] DECODED.txt [--service NAME] [--idle] [--expect-host H]
Prints per view and thread the observation counts and the hottest leaf; exits 1 on a mismatch."""
import argparse, ast, collections, gzip, json, math, re, sys

def fail(msg):
    print("FAIL: otlp_check: " + msg, file=sys.stderr)
    sys.exit(1)

def parse_text(text):
    """protoc's text format: 'name {' ... '}' and 'name: value' lines, into nested dicts of lists."""
    root, stack = collections.defaultdict(list), []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.endswith("{"):
            node = collections.defaultdict(list)
            cur[line[:-1].strip()].append(node)
            stack.append(cur)
            cur = node
        elif line == "}":
            cur = stack.pop()
        else:
            k, v = line.split(":", 1)
            v = v.strip()
            if v.startswith('"'):
                # protoc escapes bytes C-style (octal for non-ASCII); decode to UTF-8 text
                # (bytes such as a Link's ids stay recoverable: surrogateescape)
                v = ast.literal_eval("b" + v).decode("utf-8", "surrogateescape")
            elif re.fullmatch(r"-?\d+", v):
                v = int(v)
            cur[k].append(v)
    if stack:
        fail("unbalanced braces in the decoded text")
    return root

def one(node, key, default=None):
    v = node.get(key, [])
    if len(v) > 1:
        fail(f"{key} appears {len(v)} times")
    return v[0] if v else default

def any_value(v):
    if "string_value" in v: return one(v, "string_value")
    if "int_value" in v: return one(v, "int_value")
    return None

def rnd(x):
    """C's llround (halves away from zero), which fxprof uses; Python's round() goes to even."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)

def epoch_ns(ms):
    """Epoch ms (a double) in whole ns: whole ms and the fraction apart (a double of epoch ns
    rounds to 256 ns)."""
    whole = math.floor(ms)
    return whole * 1000000 + rnd((ms - whole) * 1e6)

def load_profile(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8") as f:
        return json.load(f)

def firefox_views(p, idle):
    """The observations per view, from the JSON: (thread, tid, frames, value, ts_ns)."""
    meta = p["meta"]
    start_ns = epoch_ns(meta["startTime"])
    interval_ns = meta["interval"] * 1e6
    views = collections.defaultdict(list)
    present = {"cpu"}
    def tables(th):
        sh = p.get("shared", {})
        return [th.get(k, sh.get(k)) for k in ("stackTable", "frameTable", "funcTable", "stringArray", "sources")]
    def frames(t, st):
        stt, frt, fnt, strs, src = t
        if st is None: return (("[no stack]", "", 0, 0),)
        out = []
        prefixes = stt.get("prefix") or []
        while st is not None and st >= 0:
            fr = stt["frame"][st]
            fn = frt["func"][fr]
            name = strs[fnt["name"][fn]]
            s = (fnt.get("source") or [None] * (fn + 1))[fn]
            fname = strs[src["filename"][s]] if s is not None and src else ""
            line0 = (fnt.get("lineNumber") or [None] * (fn + 1))[fn] or 0
            line = (frt.get("line") or [None] * (fr + 1))[fr] or 0
            out.append((name, fname, line0, line))
            if "prefix" in stt: st = stt["prefix"][st]
            else:
                off = stt["prefixOffset"][st]
                st = None if off == 0 else st - off
        return tuple(out)
    def times(tab):
        if "timeDeltas" in tab:
            acc, out = 0, []
            for d in tab["timeDeltas"]:
                acc += d; out.append(acc)
            return out
        return tab.get("time") or [0] * tab["length"]
    def tname(th):
        n = re.sub(r" \(tid \d+(, #\d+)?\)$", "", th.get("name", ""))
        return re.sub(r": lock waits$", "", n)
    for th in p["threads"]:
        if re.search(r": idle waits \(tid \d+(, #\d+)?\)$|: idle waits$", th.get("name", "")):
            continue  # threads waiting for work, not for a lock: in no OTLP view (convert_otlp.c)
        t = tables(th)
        s = th["samples"]
        wt = s.get("weightType", "samples")
        ts = times(s)
        w = s.get("weight") or [1] * s["length"]
        tid = int(th.get("tid", 0))
        view = {"samples": "cpu", "tracing-ms": "lock", "bytes": "alloc"}[wt]
        present.add(view)
        for i in range(s["length"]):
            st = s["stack"][i]
            fr = frames(t, st)
            if view == "cpu" and not idle and st is not None and len(fr) == 1 and fr[0][0] == "[idle]":
                continue
            scale = {"cpu": interval_ns, "lock": 1e6, "alloc": 1}[view]
            views[view].append((tname(th), tid, fr, rnd(w[i] * scale), start_ns + rnd(ts[i] * 1e6)))
        na = th.get("nativeAllocations")
        if na:
            present.update(("alloc", "live"))
            nts, nw = times(na), na["weight"]
            addr = na.get("memoryAddress")
            freed = {addr[i] for i in range(na["length"]) if nw[i] < 0} if addr else set()
            for i in range(na["length"]):
                if nw[i] <= 0: continue
                o = (tname(th), tid, frames(t, na["stack"][i]), rnd(nw[i]), start_ns + rnd(nts[i] * 1e6))
                views["alloc"].append(o)
                if addr and addr[i] not in freed:
                    views["live"].append(o)
    return views, present

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile"); ap.add_argument("decoded")
    ap.add_argument("--service"); ap.add_argument("--idle", action="store_true")
    ap.add_argument("--expect-host")
    a = ap.parse_args()
    p = load_profile(a.profile)
    req = parse_text(open(a.decoded, encoding="utf-8").read())
    d = one(req, "dictionary")
    if d is None: fail("no dictionary")
    strs = d["string_table"]
    if strs[0] != "": fail("string_table[0] is not \"\"")
    for tab in ("mapping_table", "location_table", "function_table", "attribute_table", "stack_table"):
        if not d.get(tab) or d[tab][0] != {}:
            fail(f"{tab}[0] is not the zero value")
    link0 = d["link_table"][0]
    if one(link0, "trace_id") != "\0" * 16 or one(link0, "span_id") != "\0" * 8:
        fail("link_table[0] is not 16 and 8 zero bytes")
    funcs = [(strs[one(f, "name_strindex", 0)], strs[one(f, "filename_strindex", 0)],
              one(f, "start_line", 0)) for f in d["function_table"]]
    for f in d["function_table"][1:]:
        if one(f, "system_name_strindex", 0) != one(f, "name_strindex", 0): fail("system_name differs from name")
    locs = []
    for l in d["location_table"]:
        lines = l.get("lines", [])
        if len(lines) > 1: fail("a location with more than one line")
        locs.append((one(lines[0], "function_index", 0), one(lines[0], "line", 0)) if lines else None)
    stacks = [tuple(s.get("location_indices", [])) for s in d["stack_table"]]
    attrs = [(strs[one(x, "key_strindex", 0)], any_value(one(x, "value", {})) if x else None)
             for x in d["attribute_table"]]
    def frames(si):
        out = []
        for li in stacks[si]:
            fi, line = locs[li]
            name, fname, line0 = funcs[fi]
            out.append((name, fname, line0, line))
        return tuple(out)

    rps = req["resource_profiles"]
    if len(rps) != 1: fail(f"{len(rps)} resource_profiles, expected 1")
    rp = rps[0]
    res = {one(kv, "key"): any_value(one(kv, "value")) for kv in one(rp, "resource")["attributes"]}
    meta = p["meta"]
    extra = {(g["label"], e["label"]): e.get("value") for g in meta.get("extra", []) for e in g["entries"]}
    want_svc = a.service or re.sub(r"^fxagent: ", "", meta.get("product", ""))
    want = {"service.name": want_svc, "process.pid": int(p["threads"][0]["pid"])}
    if ("JVM", "VM") in extra:
        want["process.runtime.name"] = extra[("JVM", "VM")]
        want["process.runtime.version"] = extra[("JVM", "VM version")]
        want["process.runtime.description"] = " ".join((extra[("JVM", "VM vendor")], extra[("JVM", "VM")], extra[("JVM", "VM version")]))
    if ("JVM", "host") in extra: want["host.name"] = extra[("JVM", "host")]
    if a.expect_host and want.get("host.name") != a.expect_host:
        fail(f"the profile's host is {want.get('host.name')!r}, expected {a.expect_host!r}")
    for k, v in want.items():
        if res.get(k) != v: fail(f"resource {k} = {res.get(k)!r}, expected {v!r}")
    sps = rp["scope_profiles"]
    if len(sps) != 1 or one(one(sps[0], "scope"), "name") != "fxagent": fail("not one scope named fxagent")

    views, present = firefox_views(p, a.idle)
    wall = any(str(v).startswith("wall:") for (g, l), v in extra.items() if l == "engine")
    types = {"cpu": ("wall" if wall else "cpu", "nanoseconds"), "lock": ("delay", "nanoseconds"),
             "alloc": ("alloc_space", "bytes"), "live": ("inuse_space", "bytes")}
    order = [v for v in ("cpu", "lock", "alloc", "live") if v in present]
    profs = sps[0]["profiles"]
    if len(profs) != len(order): fail(f"{len(profs)} profiles, expected {len(order)} ({order})")
    t0 = epoch_ns(meta["startTime"]) + rnd(meta.get("profilingStartTime", 0) * 1e6)
    for view, pr in zip(order, profs):
        st = one(pr, "sample_type")
        got_t = (strs[one(st, "type_strindex", 0)], strs[one(st, "unit_strindex", 0)])
        if got_t != types[view]: fail(f"profile {view}: sample type {got_t}, expected {types[view]}")
        if one(pr, "time_unix_nano") != t0: fail(f"profile {view}: time_unix_nano {one(pr, 'time_unix_nano')} != {t0}")
        dur = rnd((meta.get("profilingEndTime", 0) - meta.get("profilingStartTime", 0)) * 1e6)
        if abs(one(pr, "duration_nano", 0) - dur) > 1: fail(f"profile {view}: duration {one(pr, 'duration_nano', 0)} != {dur}")
        if view == "cpu":
            if one(pr, "period", 0) != rnd(meta["interval"] * 1e6): fail("cpu: period is not the interval")
        got = []
        seen_stacks = set()
        for s in pr.get("samples", []):
            a_ = dict(attrs[i] for i in s["attribute_indices"])
            vals, tss = s.get("values", []), s.get("timestamps_unix_nano", [])
            if len(vals) != len(tss): fail(f"{view}: {len(vals)} values for {len(tss)} timestamps")
            key = (a_["thread.name"], a_["thread.id"], s.get("stack_index", [0])[0] if isinstance(s.get("stack_index"), list) else s.get("stack_index", 0),
                   one(s, "link_index", 0))  # issue 33: a trace span's samples are a Sample apart
            if key in seen_stacks: fail(f"{view}: two samples for one thread, stack and link")
            seen_stacks.add(key)
            fr = frames(one(s, "stack_index", 0))
            for v, t in zip(vals, tss):
                got.append((a_["thread.name"], a_["thread.id"], fr, v, t))
        exp = views.get(view, [])
        if sorted(got) != sorted(exp):
            ge, eg = collections.Counter(got) - collections.Counter(exp), collections.Counter(exp) - collections.Counter(got)
            fail(f"{view}: {len(got)} observations, expected {len(exp)}; extra {list(ge)[:2]}; missing {list(eg)[:2]}")
        per = collections.Counter((o[0], o[1]) for o in got)
        leaf = collections.Counter()
        for o in got: leaf[o[2][0][0]] += o[3]
        hot = leaf.most_common(1)[0][0] if leaf else "-"
        print(f"otlp_check: {view} ({got_t[0]}/{got_t[1]}): {len(got)} observations, {len(per)} threads, "
              f"total {sum(o[3] for o in got)}, hottest leaf {hot}; " +
              ", ".join(f"{n}#{t}={c}" for (n, t), c in sorted(per.items())[:6]))
    print("otlp_check: ok: resource " + ", ".join(f"{k}={v}" for k, v in sorted(res.items())))

if __name__ == "__main__":
    main()
