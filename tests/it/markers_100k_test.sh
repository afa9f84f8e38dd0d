#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A profile with 100,000 JIT markers (fxmarkers_synth: the agent's schemas, the real writer)
# passes fxcheck and loads in profiler-cli, which counts every marker on the thread and finds
# the last one by searching for its method. Skipped (77) only when profiler-cli is missing.
# usage: markers_100k_test.sh   (env FXMARKERS_SYNTH, FXCHECK, FXAGENT_RUN_DIR)
set -euo pipefail
IT_DIR=$(cd "$(dirname "$0")" && pwd)
source "$IT_DIR/profiler_cli.sh"
n=100000
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
pcli_available || { echo "SKIP: profiler-cli is not installed"; exit 77; }
[[ -x ${FXMARKERS_SYNTH:-} && -x ${FXCHECK:-} && -n ${FXAGENT_RUN_DIR:-} ]] ||
    fail "FXMARKERS_SYNTH, FXCHECK and FXAGENT_RUN_DIR must be set (run through ctest)"
rm -rf "$FXAGENT_RUN_DIR"
mkdir -p "$FXAGENT_RUN_DIR"
cd "$FXAGENT_RUN_DIR"

"$FXMARKERS_SYNTH" jit100k.json.gz "$n" || fail "fxmarkers_synth failed"
"$FXCHECK" jit100k.json.gz || fail "fxcheck rejected jit100k.json.gz"
pcli_setup
start=$SECONDS
pcli_load jit100k.json.gz || fail "profiler-cli could not load a profile with $n markers"
echo "it.markers_100k: loaded in about $((SECONDS - start)) s"
pcli_json info.json thread info --thread t-0 || fail "profiler-cli thread info failed"
pcli_json last.json thread markers --thread t-0 --list --limit 0 \
    --search "com.example.Gen.m$((n - 1))(I)I" || fail "profiler-cli marker search failed"
python3 - "$n" <<'PY' || fail "profiler-cli does not see the markers"
import json, sys
n = int(sys.argv[1])
info = json.load(open("info.json"))
last = json.load(open("last.json"))["flatMarkers"]
count = info.get("markerCount")
print(f"markerCount {count}; search for the last method: {[m.get('label') for m in last]}")
ok = count == n + 10 and len(last) == 1 and last[0]["data"]["method"] == f"com.example.Gen.m{n - 1}(I)I"
sys.exit(0 if ok else 1)
PY
echo "it.markers_100k: OK"
