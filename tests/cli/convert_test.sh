#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof convert on a profile built here with known stacks, lines, files and weights:
#   --to collapsed: the exact expected lines (merged across threads and frames of the same
#   names, sorted, ';' and line breaks in a name made '_', [idle] left out unless --idle, a
#   sample without a stack as "[no stack]"), in the recording's view by default, the other
#   views said; --view lock (µs waited), alloc and live (bytes) give theirs (issue 30);
#   --to pprof: read back by the real reader, `go tool pprof` (Debian's golang-go): -raw must
#   list exactly the expected samples (locations leaf first with function, file and line, one
#   value per view's sample type: samples/count, cpu/nanoseconds = weight x interval,
#   contentions/count, delay/nanoseconds (a lock track's sample without a stack, a wait's end,
#   is no wait), alloc_objects/count, alloc_space/bytes, inuse_objects/count, inuse_space/bytes
#   (nativeAllocations without a free), the thread label), -top the expected flat counts, cpu
#   the default type (lock waits and bytes not in it) and -sample_index=delay the lock view;
#   idle waits (a "...: idle waits" track, issue 30 item 6) in idle_waits/count +
#   idle_delay/nanoseconds and collapsed --view idlewait, never in the lock view;
#   the default output names; -o - on a pipe; bad input and misuse are one line and leave no
#   file behind.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_convert

python3 - <<'PY'
import json
strings = ["App.main", "App.hot", "App.fib", "[idle]", "com/ex/App.java", "na;me\nx"]
def col(n, v): return [v] * n
profile = {
  "meta": {"interval": 2, "startTime": 1767225600000, "profilingStartTime": 0,
           "profilingEndTime": 1000, "product": "convert test", "preprocessedProfileVersion": 66,
           "sampleUnits": {"time": "ms", "eventDelay": "ms", "threadCPUDelta": "ns"},
           "extra": [{"label": "Sampling", "entries": [
               {"label": "engine", "format": "string", "value": "cpu: perf_events"}]}]},
  "shared": {
    "stringArray": strings,
    "funcTable": {"name": [0, 1, 2, 3, 5], "source": [0, 0, 0, None, None],
                  "lineNumber": [10, 20, 30, None, None], "length": 5},
    "frameTable": {"func": [0, 1, 2, 3, 4, 1], "line": [12, 22, 31, None, None, 25],
                   "length": 6},
    # 0 main, 1 main;hot@22, 2 main;hot@22;fib, 3 [idle], 4 main;"na;me\nx", 5 main;hot@25
    "stackTable": {"frame": [0, 1, 2, 3, 4, 5], "prefixOffset": [0, 1, 1, 0, 4, 5], "length": 6},
    "sources": {"filename": [4], "length": 1}},
  "threads": [
    {"name": "main", "samples": {"stack": [1, 1, 1, 2, 2, 5, 4, None], "weight": None,
                                 "weightType": "samples", "length": 8}},
    {"name": "worker", "samples": {"stack": [1, 3, 3, 2], "weight": [2, 1, 1, 3],
                                   "weightType": "samples", "length": 4}},
    {"name": "alloc", "samples": {"stack": [2], "weight": [4096], "weightType": "bytes",
                                  "length": 1}},
    # two lock waits (1.5 ms at main;hot@22, 0.25 ms at main;hot@22;fib) and a wait's end
    {"name": "main: lock waits", "samples": {"stack": [1, 2, None], "weight": [1.5, 0.25, 0],
                                             "weightType": "tracing-ms", "length": 3}},
    # issue 30 item 6: an idle waits track (waiting for work: 4 ms at main;hot@22;fib, then its
    # end), apart from the lock waits in every output
    {"name": "pool (tid 7): idle waits", "samples": {"stack": [2, None], "weight": [4, 0],
                                                     "weightType": "tracing-ms", "length": 2}},
    # 1000 bytes at main;hot@22;fib, freed; 2000 at main;hot@25, alive at the end
    {"name": "allocator", "samples": {"stack": [], "weight": None, "weightType": "samples",
                                      "length": 0},
     "nativeAllocations": {"time": [1, 2, 3], "weight": [1000, 2000, -1000], "stack": [2, 5, 2],
                           "memoryAddress": [7, 8, 7], "threadId": [9, 9, 9],
                           "weightType": "bytes", "length": 3}}]}
open("conv.json", "w").write(json.dumps(profile))
PY
gzip -c conv.json >conv2.json.gz

# ---- collapsed ----
cat >expected.collapsed <<'EOF'
App.main;App.hot 6
App.main;App.hot;App.fib 5
App.main;na_me_x 1
[no stack] 1
EOF
cli_run col "$FXPROF" convert conv.json --to collapsed -o -
[[ $CLI_RC -eq 0 ]] || cli_fail "convert --to collapsed -o - exited $CLI_RC"
diff -u expected.collapsed col.out || cli_fail "collapsed output differs from the expected lines"
grep -q '2 \[idle\] samples left out' col.err || cli_fail "the [idle] samples left out are not said"
grep -q 'view cpu written; the file has other views too: --view lock --view idlewait --view alloc --view live' col.err ||
    cli_fail "the other views are not said"
# the other views, each in its unit: µs waited, bytes allocated (the bytes track's and
# nativeAllocations'), bytes alive at the end
cli_run collock "$FXPROF" convert conv.json --to collapsed -o - --view lock
printf 'App.main;App.hot 1500\nApp.main;App.hot;App.fib 250\n' | diff -u - collock.out ||
    cli_fail "--view lock: not the µs waited per stack"
cli_run colidlew "$FXPROF" convert conv.json --to collapsed -o - --view idlewait
printf 'App.main;App.hot;App.fib 4000\n' | diff -u - colidlew.out ||
    cli_fail "--view idlewait: not the µs waited for work per stack"
cli_run colalloc "$FXPROF" convert conv.json --to collapsed -o - --view alloc
printf 'App.main;App.hot 2000\nApp.main;App.hot;App.fib 5096\n' | diff -u - colalloc.out ||
    cli_fail "--view alloc: not the bytes per stack"
cli_run collive "$FXPROF" convert conv.json --to collapsed -o - --view live
printf 'App.main;App.hot 2000\n' | diff -u - collive.out || cli_fail "--view live: not the live bytes"
cli_expect_error badview "--view 'heap': the views are cpu \\(or wall\\), lock, idlewait, alloc and live" \
    "$FXPROF" convert conv.json --to collapsed --view heap

cli_run colidle "$FXPROF" convert conv2.json.gz --to collapsed --idle
[[ $CLI_RC -eq 0 ]] || cli_fail "convert --idle exited $CLI_RC"
[[ -f conv2.collapsed ]] || cli_fail "the default output conv2.collapsed was not written"
{ cat expected.collapsed; echo "[idle] 2"; } | LC_ALL=C sort >expected-idle.collapsed
LC_ALL=C sort conv2.collapsed | diff -u expected-idle.collapsed - || cli_fail "--idle output differs"

# ---- pprof, read back by go tool pprof ----
cli_run pp "$FXPROF" convert conv.json --to pprof
[[ $CLI_RC -eq 0 ]] || cli_fail "convert --to pprof exited $CLI_RC"
[[ -s conv.pb.gz ]] || cli_fail "the default output conv.pb.gz was not written"
[[ $(head -c 2 conv.pb.gz | od -An -tx1 | tr -d ' ') == 1f8b ]] || cli_fail "conv.pb.gz is not gzip"
"$FXPROF" convert conv.json --to pprof -o - | cat >piped.pb.gz
cmp -s conv.pb.gz piped.pb.gz || cli_fail "-o - on a pipe does not write the same bytes as the file"

GO=$(command -v go || true)
[[ -n $GO ]] || GO=$(ls /usr/lib/go-*/bin/go 2>/dev/null | head -n 1 || true)
if [[ -z $GO ]]; then
    echo "$CLI_NAME: collapsed checked; pprof written"
    cli_skip "go (Debian's golang-go) is not installed: the pprof output was not read back by go tool pprof; scripts/deps.sh test installs it"
fi
export HOME=$FXAGENT_RUN_DIR GOCACHE=$FXAGENT_RUN_DIR/gocache GOFLAGS=-mod=mod
cli_run raw "$GO" tool pprof -raw conv.pb.gz
[[ $CLI_RC -eq 0 ]] || cli_fail "go tool pprof -raw could not read conv.pb.gz: $(cat raw.err)"
python3 - raw.out <<'PY' || cli_fail "go tool pprof -raw does not show the expected samples"
import re, sys
text = open(sys.argv[1]).read()
head, rest = text.split("\nSamples:\n", 1)
types, rest = rest.split("\n", 1)
assert types.split() == ["samples/count", "cpu/nanoseconds[dflt]", "contentions/count",
                         "delay/nanoseconds", "alloc_objects/count", "alloc_space/bytes",
                         "inuse_objects/count", "inuse_space/bytes", "idle_waits/count",
                         "idle_delay/nanoseconds"], types
assert "PeriodType: cpu nanoseconds" in head and "Period: 2000000" in head, head
assert "2 [idle] samples left out" in head, "comment"
samples_part, loc_part = rest.split("\nLocations\n", 1)
locs = {}
# a name with a line break is printed as is, so a location may span two lines
for m in re.finditer(r"^\s+(\d+): 0x0 M=\d+ (.+?) (\S*):(\d+) s=(\d+)$", loc_part, re.M | re.S):
    locs[int(m.group(1))] = (m.group(2), m.group(3), int(m.group(4)), int(m.group(5)))
got = []
lines = samples_part.splitlines()
for i, line in enumerate(lines):
    m = re.match(r"\s+((?:\d+\s+){9}\d+): ([\d ]+)$", line)
    if not m:
        continue
    thread = re.search(r"thread:\[(.*)\]", lines[i + 1]).group(1)
    stack = tuple(locs[int(x)] for x in m.group(2).split())
    got.append((thread, stack, *map(int, m.group(1).split())))
F = "com/ex/App.java"
main = ("App.main", F, 12, 10)
hot22, hot25 = ("App.hot", F, 22, 20), ("App.hot", F, 25, 20)
fib = ("App.fib", F, 31, 30)
weird = ("na;me\nx", "", 0, 0)
nostack = ("[no stack]", "", 0, 0)
ms = 2000000
z = (0, 0, 0, 0, 0, 0, 0, 0)
z2 = (0, 0)
want = [("main", (hot22, main), 3, 3 * ms, *z), ("main", (fib, hot22, main), 2, 2 * ms, *z),
        ("main", (hot25, main), 1, ms, *z), ("main", (weird, main), 1, ms, *z),
        ("main", (nostack,), 1, ms, *z),
        ("worker", (hot22, main), 2, 2 * ms, *z), ("worker", (fib, hot22, main), 3, 3 * ms, *z),
        ("alloc", (fib, hot22, main), 0, 0, 0, 0, 1, 4096, 0, 0, *z2),
        ("main: lock waits", (hot22, main), 0, 0, 1, 1500000, 0, 0, 0, 0, *z2),
        ("main: lock waits", (fib, hot22, main), 0, 0, 1, 250000, 0, 0, 0, 0, *z2),
        ("pool (tid 7): idle waits", (fib, hot22, main), 0, 0, 0, 0, 0, 0, 0, 0, 1, 4000000),
        ("allocator", (fib, hot22, main), 0, 0, 0, 0, 1, 1000, 0, 0, *z2),
        ("allocator", (hot25, main), 0, 0, 0, 0, 1, 2000, 1, 2000, *z2)]
if sorted(got, key=repr) != sorted(want, key=repr):
    print("got: ", *sorted(got, key=repr), sep="\n  ")
    print("want:", *sorted(want, key=repr), sep="\n  ")
    sys.exit(1)
print("  -raw: the 13 expected samples, with files, lines and thread labels")
PY
cli_run top "$GO" tool pprof -top -sample_index=samples conv.pb.gz
[[ $CLI_RC -eq 0 ]] || cli_fail "go tool pprof -top failed"
python3 - top.out <<'PY' || cli_fail "go tool pprof -top does not show the expected flat counts"
import re, sys
flat = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s+(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$", line)
    if m:
        flat[m.group(3)] = (int(m.group(1)), int(m.group(2)))
want = {"App.hot": (6, 11), "App.fib": (5, 5), "App.main": (0, 12), "[no stack]": (1, 1)}
for name, v in want.items():
    assert flat.get(name) == v, f"{name}: flat/cum {flat.get(name)}, expected {v}"
print("  -top: flat and cum counts as expected")
PY
# cpu is the default type: 26 ms of CPU (13 samples x 2 ms), nothing of the waits or bytes
cli_run topcpu "$GO" tool pprof -top conv.pb.gz
grep -q '^Type: cpu$' topcpu.out || cli_fail "the default sample type is not cpu: $(head -5 topcpu.out)"
grep -Eq 'Total samples = 26ms' topcpu.out || cli_fail "cpu total is not 26ms: $(head -5 topcpu.out)"
cli_run topdelay "$GO" tool pprof -top -sample_index=delay conv.pb.gz
grep -q '^Type: delay$' topdelay.out || cli_fail "-sample_index=delay: $(head -5 topdelay.out)"
grep -Eq 'Total samples = 1750us' topdelay.out || cli_fail "delay total is not 1750us: $(head -5 topdelay.out)"
cli_run topidle "$GO" tool pprof -top -sample_index=idle_delay conv.pb.gz
grep -Eq 'Total samples = 4ms' topidle.out || cli_fail "idle_delay total is not 4ms: $(head -5 topidle.out)"

# ---- misuse ----
cli_expect_error noto "convert: --to collapsed, pprof or otlp is required" "$FXPROF" convert conv.json
cli_expect_error badto "--to 'svg': the formats are collapsed, pprof and otlp" \
    "$FXPROF" convert conv.json --to svg
echo "not a profile" >bad.json
cli_expect_error badfile "bad.json is not a profile" "$FXPROF" convert bad.json --to pprof -o bad.pb.gz
[[ ! -e bad.pb.gz ]] || cli_fail "a failed convert left bad.pb.gz behind"
[[ -z $(ls bad.pb.gz.* 2>/dev/null) ]] || cli_fail "a failed convert left a temporary behind"
mkdir -p ro && chmod 555 ro
if [[ $(id -u) -ne 0 ]]; then
    cli_expect_error rodir "cannot write ro/x.collapsed" "$FXPROF" convert conv.json --to collapsed -o ro/x.collapsed
fi
echo "$CLI_NAME: OK"
