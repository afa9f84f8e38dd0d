#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxagent.Markers without markers: (1) without the agent every call is a no-op: the workload
# exits 0, says "markers enabled: false" and prints no exception; (2) with markers=off the
# agent records samples only: the same, and the profile (accepted by fxcheck) has no JVM
# marker schema, no counter and no "Markers and counters" metadata.
# usage: markers_off_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/markers_lib.sh"
markers_init "it.markers_off.jdk$(fx_jdk_major "$1")" "$1"

check_quiet_run() { # LOG WHAT
    [[ $IT_RC -eq 0 ]] || it_fail "$2: java exited $IT_RC"
    grep -q '^markers enabled: false$' "$1.out" || it_fail "$2: the workload saw markers enabled"
    grep -q '^done: ' "$1.out" || it_fail "$2: the workload did not finish"
    if grep -E -q 'Exception|Error' "$1.err"; then
        it_fail "$2: an exception or error on stderr"
    fi
}

markers_java noagent "" 2
check_quiet_run noagent "without the agent"

profile=$FXAGENT_RUN_DIR/off.json.gz
markers_java off "-agentpath:$FXAGENT_LIB=markers=off,file=$profile" 2
check_quiet_run off "markers=off"
it_no_hs_err
"$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"
python3 - "$profile" <<'PY' || it_fail "markers=off still recorded markers or counters"
import gzip, json, sys
p = json.load(gzip.open(sys.argv[1], "rt", encoding="utf-8"))
schemas = [s["name"] for s in p["meta"]["markerSchema"]]
extra = [g["label"] for g in p["meta"].get("extra", [])]
marker_count = sum(t["markers"]["length"] for t in p["threads"])
sampled = sum(t["samples"]["length"] for t in p["threads"])
print(f"schemas {schemas}, counters {len(p['counters'])}, markers {marker_count}, "
      f"samples {sampled}, extra groups {extra}")
ok = (not any(s.startswith(("Jvm", "Fx")) for s in schemas) and not p["counters"]
      and marker_count == 0 and "Markers and counters" not in extra and sampled > 0)
sys.exit(0 if ok else 1)
PY
echo "$IT_NAME: OK"
