#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Threads that never ran while sampled (issue 19, item 6), with the demo jar's IdleThread: its
# thread "fx-idle" sleeps the whole run.
#   cpu and itimer: fx-idle is a named track with its tid, start and end time; in cpu mode it has
#   no sample (its thread timer never reaches 20 ms); in itimer mode the process-wide timer may
#   land on the few ms fx-idle runs (start, interrupt, end), so it may have as many samples as
#   its own CPU time allows (the workload prints it);
#   meta.extra "Sampling" counts the empty tracks and matches the file; fxprof summary says how
#   many (header, one line naming them, --json threadsWithoutSamples); profiler-cli loads the
#   profile and shows fx-idle with 0 samples (cpu);
#   wall: no empty-track count (every thread is signalled each tick), fx-idle has samples.
# usage: tracks_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
name="it.tracks.jdk$(fx_jdk_major "$1")"
it_init "$name" "$1"
[[ -n "${FXPROF:-}" && -x "$FXPROF" ]] || it_fail "FXPROF is not set to the fxprof binary"
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"

for mode in cpu itimer wall; do
    profile=$FXAGENT_RUN_DIR/$mode.json.gz
    cmd=("$IT_JDK/bin/java" "-agentpath:$FXAGENT_LIB=mode=$mode,interval=20ms,file=$profile"
        -cp "$FXAGENT_DEMO_JAR" fxagent.demo.IdleThread 2)
    echo "$name: ${cmd[*]}"
    rc=0
    "${cmd[@]}" >"$mode.out" 2>"$mode.err" || rc=$?
    sed "s/^/$name: $mode: /" "$mode.out" "$mode.err"
    [[ $rc -eq 0 ]] || it_fail "$mode: java exited $rc"
    it_no_hs_err
    tid=$(sed -n 's/^fx-idle tid //p' "$mode.out")
    [[ $tid =~ ^[0-9]+$ ]] || it_fail "$mode: the workload did not find fx-idle's tid ('$tid')"
    idle_cpu=$(sed -n 's/^fx-idle cpu //p' "$mode.out")
    [[ $idle_cpu =~ ^[0-9]+$ ]] || it_fail "$mode: the workload did not say fx-idle's CPU time"
    "$FXCHECK" "$profile" || it_fail "$mode: fxcheck rejected $profile"
    "$FXPROF" summary "$profile" >"$mode.summary" || it_fail "$mode: fxprof summary failed"
    "$FXPROF" summary --json "$profile" >"$mode.summary.json" ||
        it_fail "$mode: fxprof summary --json failed"
    python3 - "$mode" "$profile" "$tid" "$mode.summary" "$mode.summary.json" "$idle_cpu" \
        "$IT_DIR" <<'PY' ||
import gzip, json, math, re, sys
mode, path, tid, text_path, json_path, idle_cpu, it_dir = sys.argv[1:]
idle_cpu = int(idle_cpu)
p = json.load(gzip.open(path, "rt", encoding="utf-8"))
idle = [t for t in p["threads"] if t["name"] == "fx-idle"]
if len(idle) != 1:
    sys.exit(f"{mode}: {len(idle)} tracks named fx-idle: {[t['name'] for t in p['threads']]}")
t = idle[0]
n = t["samples"]["length"]
empty = [x["name"] for x in p["threads"] if x["samples"]["length"] == 0]
label = "threads without samples (empty tracks)"
counted = [e["value"] for g in p["meta"].get("extra", []) if g["label"] == "Sampling"
           for e in g["entries"] if e["label"] == label]
summary = json.load(open(json_path, encoding="utf-8"))
text = open(text_path, encoding="utf-8").read()
print(f"{mode}: fx-idle tid {t['tid']} samples {n} register {t['registerTime']} "
      f"unregister {t['unregisterTime']}; empty tracks {empty}; meta.extra {counted}; "
      f"summary {summary['threadsWithoutSamples']}")
if str(t["tid"]) != tid:
    sys.exit(f"{mode}: fx-idle's track has tid {t['tid']}, the thread's is {tid}")
if mode == "wall":
    if n == 0:
        sys.exit("wall: fx-idle has no sample, but the wall sampler signals every thread")
    if counted:
        sys.exit(f"wall: meta.extra counts empty tracks ({counted}): wall mode adds none")
    sys.exit(0)
if mode == "cpu" and n != 0:
    sys.exit(f"{mode}: fx-idle has {n} samples; it ran {idle_cpu} ns, under one 20 ms tick")
if mode == "itimer" and n != 0:
    # ITIMER_PROF expires every 20 ms of the process's CPU (two cores: every 10 ms of wall at
    # most); a run of c ns on fx-idle can meet at most ceil(2c / 20 ms) + 1 expiries.
    bound = math.ceil(2 * idle_cpu / 20e6) + 1
    print(f"itimer: fx-idle ran {idle_cpu} ns and has {n} samples (at most {bound})")
    if n > bound:
        sys.exit(f"itimer: fx-idle has {n} samples, more than its {idle_cpu} ns of CPU allow")
    sys.path.insert(0, it_dir)
    from profile_lib import Profile
    prof = Profile(p)
    for s in t["samples"]["stack"]:
        names = prof.leaf_first(s)
        print(f"itimer: fx-idle sample: {' <- '.join(names[:8])}")
reg, unreg = t["registerTime"], t["unregisterTime"]
if not isinstance(reg, (int, float)) or not isinstance(unreg, (int, float)) or unreg <= reg:
    sys.exit(f"{mode}: fx-idle's track lacks its times: register {reg}, unregister {unreg}")
if counted != [len(empty)]:
    sys.exit(f"{mode}: meta.extra says {counted} empty tracks, the file has {len(empty)}: {empty}")
if summary["threadsWithoutSamples"] != len(empty):
    sys.exit(f"{mode}: summary --json says {summary['threadsWithoutSamples']}, not {len(empty)}")
head = text.splitlines()[0]
if f"({len(empty)} without samples)" not in head:
    sys.exit(f"{mode}: the summary line does not say how many threads had no samples: {head}")
m = re.search(r"^Threads without samples \((\d+)\): (.*)$", text, re.M)
if not m or int(m.group(1)) != len(empty) or (n == 0) != (f'"fx-idle" (tid {tid})' in m.group(2)):
    sys.exit(f"{mode}: the summary's threads without samples are not as the file says")
PY
        it_fail "$mode: the empty track is not as expected (see above)"
done

pcli_setup
pcli_load "$FXAGENT_RUN_DIR/cpu.json.gz" || it_fail "profiler-cli could not load cpu.json.gz"
handle=$(pcli_thread_handle fx-idle) || it_fail "profiler-cli: not exactly one thread named fx-idle"
pcli_json info.json thread info --thread "$handle" || it_fail "profiler-cli thread info failed"
python3 - info.json <<'PY' || it_fail "profiler-cli does not show fx-idle as an empty track"
import json, sys
info = json.load(open(sys.argv[1], encoding="utf-8"))
print(f"profiler-cli: {info.get('name')} tid {info.get('tid')} samples {info.get('sampleCount')}")
if info.get("name") != "fx-idle" or info.get("sampleCount") != 0:
    sys.exit(f"thread info: {info}")
PY
echo "$name: OK"
