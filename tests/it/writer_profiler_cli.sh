#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# it.writer_profiler_cli: the C writer's output read back by the front-end's own loader.
#   1. fxsynth writes its fixed model (.json.gz and .json; the gzip holds the same bytes) and the
#      model's truths (--expect); fxcheck accepts both files.
#   2. profiler-cli loads the .json.gz; asserted with python's json module: thread names, tids and
#      sample counts; main's top-down tree App.main 100 % -> hot 60 / warm 30 / cold 10 (+-0.5);
#      every func's total samples per thread = the model's = fxcheck's summary; each marker with
#      its type and table label; the heap counter; CPU time per thread = the deltas written;
#      meta.extra; the name given in modified UTF-8 arrives as real UTF-8.
#   3. A random model (deep stacks, 10..200 frames) loads, and per thread profiler-cli's sample
#      counts and per-func totals equal fxcheck's, computed independently from the stack table.
# Skips (77) only when profiler-cli is not installed.
# env: FXSYNTH, FXCHECK (built tools), FXAGENT_RUN_DIR (optional work dir, kept for debugging)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/it/profiler_cli.sh
source "$here/profiler_cli.sh"

name=it.writer_profiler_cli
fail() {
    echo "$name: FAIL: $*" >&2
    exit 1
}
if ! pcli_available; then
    echo "$name: SKIP: profiler-cli is not installed (npm install -g @firefox-devtools/profiler-cli)"
    exit 77
fi
: "${FXSYNTH:?FXSYNTH is not set (run through ctest)}" "${FXCHECK:?FXCHECK is not set}"
run=${FXAGENT_RUN_DIR:-$(mktemp -d -t writer-pcli.XXXXXX)}
rm -rf "$run"
mkdir -p "$run"
cd "$run"
echo "$name: profiler-cli $(profiler-cli --version), work dir $run"

# --- 1. write and check ---
"$FXSYNTH" "$run/synth.json.gz" --expect expect.json >/dev/null || fail "fxsynth .json.gz"
"$FXSYNTH" "$run/synth.json" >/dev/null || fail "fxsynth .json"
gzip -dc synth.json.gz | cmp -s - synth.json || fail "synth.json.gz does not hold synth.json's bytes"
"$FXCHECK" synth.json || fail "fxcheck rejected synth.json"
"$FXCHECK" synth.json.gz || fail "fxcheck rejected synth.json.gz"
"$FXCHECK" --summary-json synth.json.gz >fxcheck-summary.json || fail "fxcheck --summary-json"

# --- 2. the fixed model through profiler-cli ---
pcli_setup
pcli_load "$run/synth.json.gz" || fail "profiler-cli could not load synth.json.gz"
pcli_json pcli-threads.json thread list || fail "thread list"
pcli_json pcli-counters.json counter list || fail "counter list"
pcli_json pcli-meta.json profile meta || fail "profile meta"
handles=$(python3 -c 'import json; print(" ".join(t["threadHandle"] for t in json.load(open("pcli-threads.json"))["threads"]))')
for h in $handles; do
    pcli_json "pcli-info-$h.json" thread info --thread "$h" || fail "thread info $h"
    pcli_json "pcli-functions-$h.json" thread functions --thread "$h" --include-idle --limit 0 ||
        fail "thread functions $h"
    pcli_json "pcli-top-down-$h.json" thread samples-top-down --thread "$h" --max-lines 1000 ||
        fail "thread samples-top-down $h"
    pcli_json "pcli-markers-$h.json" thread markers --thread "$h" --list --limit 0 ||
        fail "thread markers $h"
done

python3 - <<'PY' || fail "the profile does not match the model (see above)"
import json

def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)

expect = load("expect.json")
summary = load("fxcheck-summary.json")
threads = load("pcli-threads.json")["threads"]
by_name = {t["name"]: t for t in threads}
failures = []

def check(ok, msg):
    print(("ok: " if ok else "FAIL: ") + msg)
    if not ok:
        failures.append(msg)

want_names = [t["name"] for t in expect["threads"]]
got_names = [t["name"] for t in sorted(threads, key=lambda t: t["threadIndex"])]
check(got_names == want_names, f"thread names {got_names} == {want_names}")

for et in expect["threads"]:
    n = et["name"]
    pt = by_name.get(n)
    if pt is None:
        check(False, f"thread {n!r} listed by profiler-cli")
        continue
    h = pt["threadHandle"]
    info = load(f"pcli-info-{h}.json")
    check(pt["tid"] == et["tid"], f"{n}: tid {pt['tid']} == {et['tid']}")
    check(info["sampleCount"] == et["samples"],
          f"{n}: {info['sampleCount']} samples == {et['samples']}")
    want_ms = et["cpuNs"] / 1e6
    fx = next(t for t in summary["threads"] if t["name"] == n)
    check(abs(pt["cpuMs"] - want_ms) <= 0.001 and abs(fx["cpuDeltaSum"] / 1e6 - want_ms) <= 0.001,
          f"{n}: CPU {pt['cpuMs']} ms (profiler-cli) == {fx['cpuDeltaSum'] / 1e6} ms (file) "
          f"== {want_ms} ms (model)")
    funcs = load(f"pcli-functions-{h}.json")["functions"]
    pc_tot = {f["name"]: f["totalSamples"] for f in funcs}
    fx_tot = {f["name"]: f["total"] for f in fx["funcs"]}
    check(pc_tot == et["funcTotals"] == fx_tot,
          f"{n}: func totals profiler-cli {pc_tot} == model {et['funcTotals']} == fxcheck {fx_tot}")

# main's top-down tree: root -> App.main -> hot/warm/cold
main_h = by_name["main"]["threadHandle"]
tree = load(f"pcli-top-down-{main_h}.json")["regularCallTree"]
pct = {}
for root in tree["children"]:
    pct[root["name"]] = root["totalPercentage"]
    if root["name"] == "com.example.App.main":
        for c in root["children"]:
            pct[c["name"]] = c["totalPercentage"]
for fn, want in expect["mainTopDownPercent"].items():
    got = pct.get(fn)
    check(got is not None and abs(got - want) <= 0.5, f"main top-down: {fn} {got} % == {want} % +-0.5")

for em in expect["markers"]:
    h = by_name[em["thread"]]["threadHandle"]
    flat = load(f"pcli-markers-{h}.json")["flatMarkers"]
    found = [m for m in flat if m["name"] == em["name"]]
    ok = len(found) == 1
    if ok and em["type"] is not None:
        ok = found[0].get("markerType") == em["type"]
    if ok and em["label"] is not None:
        ok = found[0].get("label") == em["label"]
    check(ok, f"marker {em['thread']}/{em['name']!r} type {em['type']} label {em['label']!r}: "
              f"got {[(m.get('markerType'), m.get('label')) for m in found]}")
for t in expect["threads"]:
    h = by_name[t["name"]]["threadHandle"]
    got = len(load(f"pcli-markers-{h}.json")["flatMarkers"])
    want = sum(1 for m in expect["markers"] if m["thread"] == t["name"])
    check(got == want, f"{t['name']}: {got} markers == {want}")

counters = [c["name"] for c in load("pcli-counters.json")["counters"]]
check(counters == expect["counters"], f"counters {counters} == {expect['counters']}")
c0 = load("pcli-counters.json")["counters"][0]
check(c0["unit"] == "bytes" and c0["graphType"] == "line-accumulated" and c0["rangeSampleCount"] == 10,
      f"heap counter: unit {c0['unit']}, graph {c0['graphType']}, {c0['rangeSampleCount']} samples")

meta = load("pcli-meta.json")
extra = {(g["label"], e["label"]): e["value"] for g in meta.get("extra", []) for e in g["entries"]}
check(extra.get(("Sample outcomes", "[AGCT: GC active]")) == 100,
      f"meta.extra has Sample outcomes/[AGCT: GC active] = 100: {extra}")
check(meta["sampleUnits"]["threadCPUDelta"] == "\u00b5s", "sampleUnits.threadCPUDelta is \u00b5s")

if failures:
    raise SystemExit(f"{len(failures)} check(s) failed")
PY

# --- 3. a random model with deep stacks ---
"$FXSYNTH" "$run/random.json.gz" --threads 3 --samples 30000 --stacks 400 --min-depth 10 \
    --max-depth 200 --seed 7 >/dev/null || fail "fxsynth random model"
"$FXCHECK" --summary-json random.json.gz >fxcheck-random.json || fail "fxcheck rejected random.json.gz"
pcli_load "$run/random.json.gz" || fail "profiler-cli could not load random.json.gz"
pcli_json pcli-random-threads.json thread list || fail "thread list (random)"
handles=$(python3 -c 'import json; print(" ".join(t["threadHandle"] for t in json.load(open("pcli-random-threads.json"))["threads"]))')
for h in $handles; do
    pcli_json "pcli-random-functions-$h.json" thread functions --thread "$h" --include-idle \
        --limit 0 || fail "thread functions $h (random)"
done
python3 - <<'PY' || fail "the random profile's counts differ between profiler-cli and fxcheck"
import json
summary = json.load(open("fxcheck-random.json", encoding="utf-8"))
threads = json.load(open("pcli-random-threads.json", encoding="utf-8"))["threads"]
failures = 0
check_threads = len(threads) == len(summary["threads"]) == 3
print(("ok" if check_threads else "FAIL") + f": {len(threads)} threads")
failures += not check_threads
for fx in summary["threads"]:
    pt = next((t for t in threads if t["name"] == fx["name"]), None)
    if pt is None:
        print(f"FAIL: thread {fx['name']} missing"); failures += 1; continue
    funcs = json.load(open(f"pcli-random-functions-{pt['threadHandle']}.json", encoding="utf-8"))["functions"]
    pc = {f["name"]: (f["selfSamples"], f["totalSamples"]) for f in funcs}
    mine = {f["name"]: (f["self"], f["total"]) for f in fx["funcs"]}
    ok = pc == mine and len(mine) > 100
    print(("ok" if ok else "FAIL") + f": {fx['name']}: {len(mine)} funcs, {fx['samples']} samples,"
          f" self/total per func equal in profiler-cli and fxcheck")
    if not ok:
        diff = sorted(k for k in set(pc) | set(mine) if pc.get(k) != mine.get(k))[:5]
        print("  differences:", [(k, pc.get(k), mine.get(k)) for k in diff])
    failures += not ok
raise SystemExit(1 if failures else 0)
PY
echo "$name: OK"
