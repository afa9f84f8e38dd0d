#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof convert --to otlp on a profile built here with every view: CPU samples on two threads
# ([idle] and a sample without a stack among them), a "NAME: lock waits (tid N)" track, a
# "NAME (tid N): idle waits" track (a thread waiting for work: in no view, the lock figures
# below are the lock waits track's alone), and nativeAllocations with one allocation freed;
# meta.extra's JVM group with host and VM.
# The output decodes with the real decoder, `protoc --decode` against the schema the tests keep
# (tests/cli/otlp: opentelemetry-proto's v1development files), and otlp_check.py compares every
# field with the Firefox file: dictionary zero entries, the resource, one profile per view and
# type, every observation (thread name and id, stack, value, timestamp). Then the exact figures
# of this file (observation counts per view, the live view's one survivor, the idle count said),
# --idle, .json.gz input and the default name, -o - on a pipe, and the checker's own failure on a
# request that does not match its profile.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_convert_otlp
command -v protoc >/dev/null || cli_skip "protoc (Debian's protobuf-compiler) is not installed; scripts/deps.sh test installs it"
PROTO=$FXCLI_TESTS/otlp
decode() { # IN OUT
    protoc -I "$PROTO" \
        --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
        opentelemetry/proto/collector/profiles/v1development/profiles_service.proto <"$1" >"$2" ||
        cli_fail "protoc could not decode $1"
}

python3 - <<'PY'
import json
strings = ["App.main", "App.hot", "App.fib", "[idle]", "com/ex/App.java", "Lock.wait", "byte[]",
           "App.alloc"]
profile = {
  "meta": {"interval": 2, "startTime": 1767225600000.5, "profilingStartTime": 1,
           "profilingEndTime": 1001, "product": "fxagent: com.ex.App",
           "preprocessedProfileVersion": 66,
           "extra": [{"label": "Sampling", "entries": [
                          {"label": "engine", "format": "string", "value": "cpu: perf_events"}]},
                     {"label": "JVM", "entries": [
                          {"label": "VM", "format": "string", "value": "OpenJDK 64-Bit Server VM"},
                          {"label": "VM version", "format": "string", "value": "17.0.9+9"},
                          {"label": "VM vendor", "format": "string", "value": "Debian"},
                          {"label": "host", "format": "string", "value": "build-7"}]}]},
  "shared": {
    "stringArray": strings,
    "funcTable": {"name": [0, 1, 2, 3, 5, 6, 7], "source": [0, 0, 0, None, None, None, 0],
                  "lineNumber": [10, 20, 30, None, None, None, 50], "length": 7},
    "frameTable": {"func": [0, 1, 2, 3, 1, 4, 6, 5], "line": [12, 22, 31, None, 25, None, 51, None],
                   "length": 8},
    # 0 main, 1 main;hot@22, 2 main;hot@22;fib, 3 [idle], 4 main;hot@25, 5 main;Lock.wait,
    # 6 main;alloc@51, 7 main;alloc@51;byte[]
    "stackTable": {"frame": [0, 1, 2, 3, 4, 5, 6, 7], "prefix": [None, 0, 1, None, 0, 0, 0, 6],
                   "length": 8},
    "sources": {"filename": [4], "length": 1}},
  "threads": [
    {"name": "main", "pid": "4242", "tid": 4243,
     "samples": {"stack": [1, 1, 2, 3, 4, None, 1], "timeDeltas": [1, 2, 2, 2, 2, 2, 2.5],
                 "weight": None, "weightType": "samples", "length": 7},
     "nativeAllocations": {"time": [3, 5, 9], "weight": [4096, 100, -4096], "weightType": "bytes",
                           "stack": [7, 7, 7], "memoryAddress": [1, 2, 1], "threadId": [4243] * 3,
                           "length": 3}},
    {"name": "worker (tid 4250)", "pid": "4242", "tid": 4250,
     "samples": {"stack": [2, 3, 2], "time": [10, 12, 14], "weight": [3, 1, 1],
                 "weightType": "samples", "length": 3}},
    {"name": "worker: lock waits (tid 4250)", "pid": "4242", "tid": 4250,
     "samples": {"stack": [5, 5], "time": [20, 400], "weight": [150.25, 2.5],
                 "weightType": "tracing-ms", "length": 2}},
    {"name": "worker (tid 4250): idle waits", "pid": "4242", "tid": 4250,
     "samples": {"stack": [5], "time": [500], "weight": [300],
                 "weightType": "tracing-ms", "length": 1}}]}
open("all.json", "w").write(json.dumps(profile))
# the same profile with one sample moved: the checker must refuse its request
profile["threads"][1]["samples"]["time"][0] = 11
open("moved.json", "w").write(json.dumps(profile))
PY

cli_run conv "$FXPROF" convert all.json --to otlp -o all.otlp.pb
[[ $CLI_RC -eq 0 ]] || cli_fail "convert --to otlp exited $CLI_RC"
grep -q '2 \[idle\] samples left out' conv.err || cli_fail "the [idle] samples left out are not said"
decode all.otlp.pb all.txt
python3 "$FXCLI_TESTS/otlp_check.py" all.json all.txt --expect-host build-7 | tee check.out ||
    cli_fail "the OTLP request does not match its profile"
# The figures of this file, written out: main has 6 CPU samples but [idle] (one without a
# stack), worker 2 (weights 3 and 1: 8 ms); two waits; 2 allocations, one alive.
for want in 'cpu (cpu/nanoseconds): 8 observations, 2 threads, total 20000000' \
    'lock (delay/nanoseconds): 2 observations, 1 threads, total 152750000' \
    'alloc (alloc_space/bytes): 2 observations, 1 threads, total 4196' \
    'inuse_space/bytes): 1 observations, 1 threads, total 100, hottest leaf byte\[\]' \
    'main#4243=6, worker#4250=2' 'resource host.name=build-7, process.pid=4242'; do
    grep -q -- "$want" check.out || cli_fail "the check's figures lack '$want'"
done
grep -q 'service.name=com.ex.App' check.out || cli_fail "service.name is not the main class"
# the timestamp of main's first sample, whole ns: startTime .5 ms + 1 ms
grep -q 'timestamps_unix_nano: 1767225600001500000$' all.txt || cli_fail "a timestamp is not exact"

cli_run idle "$FXPROF" convert all.json --to otlp --idle -o idle.otlp.pb
decode idle.otlp.pb idle.txt
python3 "$FXCLI_TESTS/otlp_check.py" all.json idle.txt --idle | tee idle.out ||
    cli_fail "--idle: the request does not match its profile"
grep -q 'cpu (cpu/nanoseconds): 10 observations' idle.out || cli_fail "--idle does not keep the [idle] samples"

gzip -c all.json >gz.json.gz
cli_run gz "$FXPROF" convert gz.json.gz --to otlp
[[ $CLI_RC -eq 0 && -s gz.otlp.pb ]] || cli_fail "the default output gz.otlp.pb was not written"
cmp -s gz.otlp.pb all.otlp.pb || cli_fail ".json.gz input does not give the same request"
"$FXPROF" convert all.json --to otlp -o - | cat >piped.otlp.pb
cmp -s piped.otlp.pb all.otlp.pb || cli_fail "-o - on a pipe does not write the same bytes"

# the checker itself fails on a request that is not its profile's
if python3 "$FXCLI_TESTS/otlp_check.py" moved.json all.txt >bad.out 2>&1; then
    cli_fail "otlp_check.py accepted a request for another profile"
fi
grep -q 'cpu: 8 observations, expected 8; extra' bad.out || cli_fail "the checker's refusal does not name the moved sample: $(cat bad.out)"
echo "$CLI_NAME: ok"
