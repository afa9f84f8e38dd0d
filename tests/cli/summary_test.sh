#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof summary on profiles with known proportions: fxsynth's default model (when built) and
# the checked-in summary_profile.json (plain and gzipped), whose thread "main" splits its samples
#   self:  App.hot 40 %, App.warm 30 %, App.fib 20 %, App.cold 10 %
#   total: App.main 100 %, App.hot 60 %, App.warm 30 %, App.fib 20 % (recursive: once per
#          sample), App.cold 10 %
# main is listed first (the busiest by CPU), meta.extra's outcome count is printed, --top and
# --thread select, and an unknown --thread fails with one line; [idle] is left out of the shares
# and said apart, zero counters are hidden unless --all, --json gives the same figures; idle
# waits (an "...: idle waits" track) are counted and shown apart from lock waits (--view
# idlewait, --json views.idlewait);
# fxprof --version.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_summary

profiles=("$FXCLI_TESTS/summary_profile.json")
gzip -c "$FXCLI_TESTS/summary_profile.json" >summary_profile.json.gz
profiles+=("$FXAGENT_RUN_DIR/summary_profile.json.gz")
if [[ -n "${FXSYNTH:-}" && -x "$FXSYNTH" ]]; then
    "$FXSYNTH" synth.json.gz >/dev/null
    profiles+=("$FXAGENT_RUN_DIR/synth.json.gz")
else
    echo "$CLI_NAME: fxsynth not built: only the checked-in profile is used"
fi

check_summary() {
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
blocks = re.split(r"\n(?=Thread \")", text)
threads = [b for b in blocks if b.startswith("Thread ")]
assert threads and threads[0].startswith('Thread "main"'), "main is not listed first"
main = threads[0]
def section(block, name):
    part = block.split(f"  {name}:\n", 1)[1]
    rows = {}
    for line in part.splitlines():
        m = re.fullmatch(r"\s+(\d+\.\d)%\s+(\d+)\s+(.+)", line)
        if not m:
            break
        rows[m.group(3)] = float(m.group(1))
    return rows
want = {"self": {"com.example.App.hot": 40.0, "com.example.App.warm": 30.0,
                 "com.example.App.fib": 20.0, "com.example.App.cold": 10.0},
        "total": {"com.example.App.main": 100.0, "com.example.App.hot": 60.0,
                  "com.example.App.warm": 30.0, "com.example.App.fib": 20.0,
                  "com.example.App.cold": 10.0}}
for name, expected in want.items():
    got = section(main, name)
    assert got == expected, f"main {name}: {got} != {expected}"
assert "Sample outcomes: [AGCT: GC active]: 100" in text, "meta.extra outcome count missing"
print("  main self/total percentages as expected")
PY
}

for p in "${profiles[@]}"; do
    cli_run summary "$FXPROF" summary "$p"
    [[ $CLI_RC -eq 0 ]] || cli_fail "fxprof summary $p exited $CLI_RC"
    [[ ! -s summary.err ]] || cli_fail "fxprof summary $p wrote to stderr"
    check_summary summary.out || cli_fail "wrong summary of $p"
done

p=${profiles[0]}
cli_run top "$FXPROF" summary "$p" --top 2 --thread main
[[ $CLI_RC -eq 0 ]] || cli_fail "--top 2 --thread main exited $CLI_RC"
[[ $(grep -c '^Thread ' top.out) -eq 1 ]] || cli_fail "--thread main printed other threads"
[[ $(grep -cE '^ +[0-9]+\.[0-9]%' top.out) -eq 4 ]] || cli_fail "--top 2 did not give 2 rows per list"
# [idle] is out of the shares (worker-1: 2 of its 3 busy samples, not of 4), said apart; a zero
# counter is hidden unless --all; --json carries the same figures.
cli_run text "$FXPROF" summary "$p"
grep -q '"worker-1" (tid 1002): 3 samples, .*and 1 \[idle\] (off the CPU, not in the shares)' text.out ||
    cli_fail "worker-1's [idle] sample is not said apart"
grep -Eq '^ +66\.7% +2 +com\.example\.App\.warm' text.out || cli_fail "worker-1's share is not of its busy samples"
! grep -q 'safepoint' text.out || cli_fail "a zero counter is shown without --all"
grep -q '1 counters that are zero not shown; --all shows them' text.out || cli_fail "the hidden counters are not said"
cli_run all "$FXPROF" summary "$p" --all
grep -q 'Sample outcomes: \[AGCT: safepoint\]: 0' all.out || cli_fail "--all does not show the zero counter"
cli_run json "$FXPROF" summary "$p" --json
[[ $CLI_RC -eq 0 ]] || cli_fail "summary --json exited $CLI_RC"
python3 - json.out <<'PY' || cli_fail "summary --json is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == 13 and d["idle"] == 1 and d["mode"] == "cpu", d
# issue 30: the view shown and every view's total, each with its unit
assert d["view"] == "cpu" and d["unit"] == "samples", d
v = d["views"]
assert v["cpu"] == {"unit": "samples", "counts": "CPU samples", "samples": 13, "withoutStack": 1,
                    "ms": 13 * d["intervalMs"]}, v["cpu"]
assert v["lock"] == {"unit": "ms", "waits": 0, "ms": 0} and v["alloc"]["unit"] == "bytes", v
w = [t for t in d["threads"] if t["name"] == "worker-1"][0]
assert w["samples"] == 3 and w["idle"] == 1 and w["withoutStack"] == 1, w
assert w["self"][0] == {"name": "com.example.App.warm", "samples": 2, "percent": 66.7}, w["self"]
m = d["threads"][0]
assert m["name"] == "main" and m["self"][0]["percent"] == 40, m
assert [e["label"] for e in d["extra"]] == ["[AGCT: GC active]"], d["extra"]
PY
# virtual-thread waits are markers (vtwait=): counted with their ms, other markers not
python3 - "$p" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
d["threads"][0]["markers"] = {"data": [{"type": "JvmVirtualThreadWait", "duration": 20.5},
                                       {"type": "JvmVirtualThreadWait", "duration": 1.5},
                                       {"type": "GCMajor", "duration": 9}], "length": 3}
json.dump(d, open("vt.json", "w"))
PY
cli_run vt "$FXPROF" summary --json vt.json
python3 -c 'import json,sys; v=json.load(open("vt.out"))["views"]["vtwait"]; sys.exit(v != {"unit": "ms", "waits": 2, "ms": 22})' ||
    cli_fail "virtual-thread waits: $(cat vt.out | head -c 300)"
cli_run vttext "$FXPROF" summary vt.json
head -n 1 vttext.out | grep -q '; virtual-thread waits: 2, 22.0 ms' || cli_fail "vt waits on the first line: $(head -n 1 vttext.out)"
# issue 30 item 6: idle waits (a pool thread waiting for work, "NAME: idle waits") are a view of
# their own, never in the lock waits: 1 lock wait of 2.5 ms, 2 idle waits of 40 ms (and the
# ends of the waits: samples without a stack, weight 0)
python3 - "$p" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
def track(name, tid, stacks, weights):
    n = len(stacks)
    return {"name": name, "tid": tid, "processType": "default",
            "samples": {"stack": stacks, "time": [float(i) for i in range(n)], "weight": weights,
                        "weightType": "tracing-ms", "length": n}}
d["threads"] += [track("main (tid 1001): lock waits", 1001, [3, None], [2.5, 0]),
                 track("pool (tid 7): idle waits", 7, [1, None, 3, None], [10, 0, 30, 0])]
json.dump(d, open("idle.json", "w"))
PY
cli_run idle "$FXPROF" summary --json idle.json
python3 - idle.out <<'PY' || cli_fail "idle waits apart from lock waits: $(head -c 600 idle.out)"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["views"]
assert d["samples"] == 13, d["samples"]
assert v["lock"] == {"unit": "ms", "waits": 1, "ms": 2.5}, v["lock"]
assert v["idlewait"] == {"unit": "ms", "waits": 2, "ms": 40}, v["idlewait"]
PY
cli_run idletext "$FXPROF" summary idle.json
head -n 1 idletext.out | grep -q '; lock waits: 1 waits, 2.5 ms; idle waits (waiting for work, not lock waits): 2 waits, 40.0 ms' ||
    cli_fail "lock and idle waits on the first line: $(head -n 1 idletext.out)"
cli_run idleview "$FXPROF" summary idle.json --view idlewait
grep -q '^Thread "pool (tid 7): idle waits" (tid 7): 2 idle waits, 40.0 ms waited' idleview.out &&
    ! grep -q 'lock waits" (tid' idleview.out && grep -q '^View: idle waits' idleview.out ||
    cli_fail "--view idlewait: $(cat idleview.out)"
cli_run lockview "$FXPROF" summary idle.json --view lock
grep -q '^Thread "main (tid 1001): lock waits" (tid 1001): 1 lock waits, 2.5 ms waited' lockview.out &&
    ! grep -q 'idle waits" (tid' lockview.out || cli_fail "--view lock: $(cat lockview.out)"
grep -q '^View: the recording.s samples' text.out || cli_fail "the view shown is not named"
head -n 1 text.out | grep -q ', 13 CPU samples (each one interval of ' || cli_fail "the first line: $(head -n 1 text.out)"
cli_expect_error badview "--view 'heap': the views are cpu \\(or wall\\), lock, idlewait, alloc and live" \
    "$FXPROF" summary "$p" --view heap
cli_run version "$FXPROF" --version
[[ $CLI_RC -eq 0 ]] && grep -Eq '^fxprof [0-9]+\.[0-9]+\.[0-9]+ ' version.out || cli_fail "fxprof --version"
cli_expect_error nothread "no thread named 'nope' \(threads: 'worker-1', 'main'\)" \
    "$FXPROF" summary "$p" --thread nope
echo "$CLI_NAME: OK"
