#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Do markers and counters cost anything? Runs the demo (java-test/demo) at interval=10ms with
# markers=on and markers=off, interleaved (on, off, on, off, ...) so that a change in the
# machine's load hits both alike, N times each (default 5), plus N runs without the agent as a
# reference; prints the machine, the exact commands, and the median and spread (min..max) of
# the process's wall time and CPU time (user + sys, from wait4) as a Markdown table, and the
# ratios on/off. Builds the agent and the demo into its own build dir first.
# usage: bench/run_markers_bench.sh [--runs N] [--seconds S] [--jdk JAVA_HOME]
#                                   [--build-dir DIR] [--build-type TYPE]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=5
seconds=3
jdk=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
build=$root/build-bench-markers
type=RelWithDebInfo
while [[ $# -gt 0 ]]; do
    case $1 in
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --jdk) jdk=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --build-type) type=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--seconds S] [--jdk JAVA_HOME] [--build-dir DIR] [--build-type TYPE]" >&2
       exit 2 ;;
    esac
done

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="$type" -DFXAGENT_TESTS=OFF >/dev/null
cmake --build "$build" -j2 --target fxagent fxagent_demo >/dev/null
lib=$build/agent/libfxagent.so
jar=$build/java-test/fxagent-demo.jar
work=$(mktemp -d /tmp/fxmkbench.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "### Machine"
echo
echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), nproc $(nproc)"
echo "- RAM: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo); kernel $(uname -sr)"
echo "- JDK: $("$jdk/bin/java" -version 2>&1 | head -n 1); agent build type $type"
echo "- Command: \`bench/run_markers_bench.sh --runs $runs --seconds $seconds\`; each run is"
echo "  \`java [-agentpath:libfxagent.so=interval=10ms,quiet,file=F,markers=on|off] -cp fxagent-demo.jar fxagent.demo.Demo $seconds\`"
echo

# One run: prints {"config","wall_s","cpu_s","loadavg","markers_cpu_ms"} as a JSON line.
run_one() {
    local config=$1 i=$2 agent=()
    local profile=$work/$config-$i.json.gz
    case $config in
    on | off) agent=("-agentpath:$lib=interval=10ms,quiet,file=$profile,markers=$config") ;;
    esac
    python3 - "$config" "$profile" "$jdk/bin/java" "${agent[@]}" -cp "$jar" fxagent.demo.Demo \
        "$seconds" <<'PY'
import gzip, json, os, subprocess, sys, time
config, profile, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
load = float(open("/proc/loadavg").read().split()[0])
t0 = time.monotonic()
proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(proc.pid, 0)
wall = time.monotonic() - t0
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(f"{config}: java exited {os.waitstatus_to_exitcode(status)}")
marker_ms = None
if os.path.exists(profile):
    with gzip.open(profile, "rt", encoding="utf-8") as f:
        extra = json.load(f)["meta"].get("extra", [])
    for g in extra:
        for e in g["entries"]:
            if e["label"] == "drain CPU time for markers and counters":
                marker_ms = float(str(e["value"]).split()[0])
print(json.dumps({"config": config, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime,
                  "loadavg": load, "markers_cpu_ms": marker_ms}))
PY
}

results=$work/results.jsonl
for i in $(seq 1 "$runs"); do
    for config in on off none; do
        run_one "$config" "$i" >>"$results"
    done
done

python3 - "$results" "$runs" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {c: [r for r in rows if r["config"] == c] for c in ("on", "off", "none")}
def fig(c, k):
    v = [r[k] for r in by[c] if r[k] is not None]
    return statistics.median(v), min(v), max(v)
print(f"| measure ({sys.argv[2]} interleaved runs each) | median | min .. max |")
print("| --- | ---: | ---: |")
names = {"on": "markers=on", "off": "markers=off", "none": "no agent"}
for k, label in (("wall_s", "wall"), ("cpu_s", "CPU (user+sys)")):
    for c in ("on", "off", "none"):
        m, lo, hi = fig(c, k)
        print(f"| {names[c]}, {label} | {m:.3f} s | {lo:.3f} .. {hi:.3f} |")
m, lo, hi = fig("on", "markers_cpu_ms")
print(f"| markers=on: drain CPU for markers and counters (meta.extra) | {m:.1f} ms | {lo:.1f} .. {hi:.1f} |")
for k, label in (("wall_s", "wall"), ("cpu_s", "CPU")):
    ratios = [a[k] / b[k] for a, b in zip(by["on"], by["off"])]
    print(f"| **on / off, {label}** (per pair) | **{statistics.median(ratios):.3f} x** | "
          f"{min(ratios):.3f} .. {max(ratios):.3f} |")
loads = [r["loadavg"] for r in rows]
print(f"\nLoad average before the runs: {min(loads):.1f} .. {max(loads):.1f} on this machine.")
PY
