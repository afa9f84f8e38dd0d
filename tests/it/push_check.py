#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks what a push_receiver.py recorded against the period files the agent wrote (issue 33).
  otlp DIR FILES...   every answered-200 body decodes with protoc and matches exactly one period
                      file field by field (tests/cli/otlp_check.py, --service and --label too),
                      every file is delivered once unless the last file's meta.extra "Push"
                      counts it dropped, the refused (503) requests were retried, and the CPU
                      observations received add up to those in the files less the dropped ones.
  pyroscope DIR FILE  one request: /ingest?name=SERVICE{labels}&from&until&format=pprof, a
                      multipart field "profile" holding gzipped pprof that `go tool pprof -raw`
                      reads, with the hot method; from/until bracket the file's range.
options: --service NAME --label K=V (repeatable) --refused N --hot METHOD --go GO"""
import argparse, glob, gzip, json, math, os, re, subprocess, sys, urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
from otlp_check import firefox_views, load_profile
CHECK = os.path.join(HERE, "..", "cli", "otlp_check.py")
PROTO = os.path.join(HERE, "..", "cli", "otlp")

def fail(msg):
    print("FAIL: push_check: " + msg, file=sys.stderr)
    sys.exit(1)

def requests(d):
    out = []
    for j in sorted(glob.glob(os.path.join(d, "req-*.json")), key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0])):
        r = json.load(open(j))
        r["body"] = open(j[:-5] + ".body", "rb").read()
        out.append(r)
    return out

def push_extra(path):
    p = json.load(gzip.open(path, "rt"))
    return {e["label"]: e["value"] for g in p["meta"].get("extra", []) if g["label"] == "Push" for e in g["entries"]}

def otlp(a):
    reqs = requests(a.dir)
    refused = [r for r in reqs if r["status"] != 200]
    if len(refused) != a.refused: fail(f"{len(refused)} refused requests, expected {a.refused}")
    for r in reqs:
        if r["path"] != "/v1development/profiles" or r["headers"].get("Content-Type") != "application/x-protobuf":
            fail(f"request {r['path']} {r['headers'].get('Content-Type')}: not OTLP/HTTP protobuf")
        # gzip, which OTLP/HTTP servers must accept (docs/FLEET.md), said by Content-Encoding
        if r["headers"].get("Content-Encoding") != "gzip" or r["body"][:2] != b"\x1f\x8b":
            fail(f"request {r['path']}: Content-Encoding {r['headers'].get('Content-Encoding')}, not a gzipped body")
        r["body"] = gzip.decompress(r["body"])
    got = {f: 0 for f in a.files}
    received = 0
    for i, r in enumerate(x for x in reqs if x["status"] == 200):
        dec = subprocess.run(["protoc", "-I", PROTO,
            "--decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest",
            "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"],
            input=r["body"], capture_output=True)
        if dec.returncode != 0: fail(f"protoc could not decode request {i}: {dec.stderr.decode()}")
        txt = os.path.join(a.dir, f"delivered-{i}.txt")
        open(txt, "wb").write(dec.stdout)
        for k, v in (l.split("=", 1) for l in a.label):
            if f'key: "{k}"\n      value {{\n        string_value: "{v}"' not in dec.stdout.decode():
                fail(f"request {i}: no resource attribute {k}={v}")
        match = None
        for f in a.files:
            args = ["python3", CHECK, f, txt] + (["--service", a.service] if a.service else [])
            c = subprocess.run(args, capture_output=True, text=True)
            if c.returncode == 0:
                match = (f, c.stdout)
                break
        if not match: fail(f"delivered request {i} matches no period file")
        got[match[0]] += 1
        m = re.search(r"cpu \((?:cpu|wall)/nanoseconds\): (\d+) observations", match[1])
        received += int(m.group(1))
        if a.hot and a.hot in dec.stdout.decode(): a.hot_seen = True
    last = push_extra(a.files[-1])
    dropped = int(last.get("periods dropped (queue full, oldest first)", 0))
    missing = [f for f, n in got.items() if n == 0]
    twice = [f for f, n in got.items() if n > 1]
    if twice: fail(f"delivered more than once: {twice}")
    if len(missing) != dropped: fail(f"not delivered: {missing}, but {dropped} counted dropped")
    # samples taken: the CPU view of every file ([idle] markers are not samples), less the dropped
    taken = sum(len(firefox_views(load_profile(f), False)[0]["cpu"]) for f in a.files)
    taken -= sum(len(firefox_views(load_profile(f), False)[0]["cpu"]) for f in missing)
    if received != taken: fail(f"received {received} CPU samples, the delivered files hold {taken}")
    if a.hot and not getattr(a, "hot_seen", False): fail(f"no delivered profile has {a.hot}")
    print(f"push_check: otlp: {len(reqs)} requests ({len(refused)} refused, retried), {len(a.files)} periods, "
          f"{len(a.files) - len(missing)} delivered, {dropped} dropped; {received} CPU samples received = {taken} taken less dropped")

def pyroscope(a):
    reqs = requests(a.dir)
    if len(reqs) != 1: fail(f"{len(reqs)} requests, expected 1 (at exit)")
    r = reqs[0]
    u = urllib.parse.urlsplit(r["path"])
    q = urllib.parse.parse_qs(u.query)
    if u.path != "/ingest": fail(f"path {u.path}")
    labels = ",".join(a.label)
    want = a.service + ("{" + labels + "}" if labels else "")
    if q.get("name") != [want]: fail(f"name={q.get('name')}, expected {want}")
    if q.get("format") != ["pprof"]: fail("format is not pprof")
    p = json.load(gzip.open(a.files[0], "rt"))
    m = p["meta"]
    t0 = (m["startTime"] + m.get("profilingStartTime", 0)) / 1000
    t1 = (m["startTime"] + m.get("profilingEndTime", 0)) / 1000
    if int(q["from"][0]) != math.floor(t0) or int(q["until"][0]) != math.ceil(t1):
        fail(f"from/until {q['from']}/{q['until']} do not bracket {t0}..{t1}")
    ct = r["headers"].get("Content-Type", "")
    # the ingest API documents no request compression: the pprof inside is gzipped instead
    if "Content-Encoding" in r["headers"]: fail(f"Content-Encoding {r['headers']['Content-Encoding']} on an ingest request")
    b = re.search(r"boundary=(\S+)", ct)
    if not ct.startswith("multipart/form-data") or not b: fail(f"Content-Type {ct}")
    parts = r["body"].split(b"--" + b.group(1).encode())
    prof = [x for x in parts if b'name="profile"' in x]
    if len(prof) != 1: fail("no multipart field 'profile'")
    data = prof[0].split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n", 1)[0]
    if data[:2] != b"\x1f\x8b": fail("the profile is not gzipped")
    pb = os.path.join(a.dir, "ingest.pb.gz")
    open(pb, "wb").write(data)
    env = dict(os.environ, HOME=a.dir, GOCACHE=os.path.join(a.dir, "gocache"))
    c = subprocess.run([a.go, "tool", "pprof", "-raw", pb], capture_output=True, text=True, env=env)
    if c.returncode != 0: fail(f"go tool pprof -raw: {c.stderr}")
    if a.hot and a.hot not in c.stdout: fail(f"go tool pprof -raw does not show {a.hot}")
    n = len(re.findall(r"^\s+\d+\s+\d+", c.stdout, re.M))
    print(f"push_check: pyroscope: name={want}, from={q['from'][0]} until={q['until'][0]}, pprof read by go tool pprof ({n} samples, {a.hot} in it)")

ap = argparse.ArgumentParser()
ap.add_argument("kind", choices=["otlp", "pyroscope"]); ap.add_argument("dir"); ap.add_argument("files", nargs="+")
ap.add_argument("--service"); ap.add_argument("--label", action="append", default=[])
ap.add_argument("--refused", type=int, default=0); ap.add_argument("--hot"); ap.add_argument("--go", default="go")
a = ap.parse_args()
otlp(a) if a.kind == "otlp" else pyroscope(a)
