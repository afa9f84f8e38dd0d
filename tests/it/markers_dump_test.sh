#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The profiler's own markers across periodic dumps: with loop=1s each file but the first holds
# exactly one "fxagent dump" marker (schema FxDump) describing the file written before it: its
# path, its size in bytes and its sample count; the first file holds "sampling started".
# Every file passes fxcheck. The run forces the GC attribution's fallback, the MXBeans
# (FXAGENT_TEST_GC_MXBEANS=1; it.markers proves the management interface): the GC pauses still
# name their collector and carry heap used before and after, and meta.extra says which path served.
# usage: markers_dump_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/markers_lib.sh"
markers_init "it.markers_dump.jdk$(fx_jdk_major "$1")" "$1"

FXAGENT_TEST_GC_MXBEANS=1 markers_java run "-agentpath:$FXAGENT_LIB=loop=1s,file=$FXAGENT_RUN_DIR/loop-%n.json.gz" 2 2500
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
for f in loop-*.json.gz; do
    "$FXCHECK" "$f" || it_fail "fxcheck rejected $f"
done
python3 - "$FXAGENT_RUN_DIR" <<'PY' || it_fail "the dump markers do not describe the files"
import glob, gzip, json, os, re, sys
run = sys.argv[1]
files = sorted(glob.glob(os.path.join(run, "loop-*.json.gz")),
               key=lambda f: int(re.search(r"loop-(\d+)", f).group(1)))
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad += not ok
def markers(p, name):
    S = p["shared"]["stringArray"]
    return [t["markers"]["data"][i] for t in p["threads"] for i in range(t["markers"]["length"])
            if S[t["markers"]["name"][i]] == name]
check(len(files) >= 2, f"{len(files)} files written (>= 2)")
profiles = [json.load(gzip.open(f, "rt", encoding="utf-8")) for f in files]
check(len(markers(profiles[0], "sampling started")) == 1, "the first file has 'sampling started'")
check(not markers(profiles[0], "fxagent dump"), "the first file has no dump marker")
for prev, (f, p) in zip(files, list(zip(files, profiles))[1:]):
    dumps = markers(p, "fxagent dump")
    samples = sum(t["samples"]["length"] for t in profiles[files.index(prev)]["threads"])
    want = {"type": "FxDump", "file": prev, "samples": samples, "bytes": os.path.getsize(prev)}
    got = [{k: d.get(k) for k in want} for d in dumps]
    check(got == [want], f"{os.path.basename(f)}: dump marker {got} describes {want}")
    check(all(d.get("duration", -1) > 0 for d in dumps), f"{os.path.basename(f)}: write time > 0")
gcs = [d for p in profiles for d in markers(p, "GC pause")]
check(len(gcs) >= 2, f"{len(gcs)} GC pauses in all files (>= 2)")
check(any(d.get("collector", "unknown") != "unknown" for d in gcs),
      f"the MXBeans name a collector ({sorted({d.get('collector') for d in gcs})})")
check(any(d.get("heapBefore", 0) > 0 and d.get("heapAfter", 0) > 0 for d in gcs),
      "the MXBeans give heap used before and after a pause")
def extra(p):
    return {e["label"]: e["value"] for g in p["meta"].get("extra") or []
            if g["label"] == "Markers and counters" for e in g["entries"]}
srcs = {extra(p).get("GC attribution source") for p in profiles} - {None}
check(srcs == {"GC MXBeans"}, f"meta.extra: GC attribution source {srcs} is the MXBeans")
sys.exit(1 if bad else 0)
PY
echo "$IT_NAME: OK"
