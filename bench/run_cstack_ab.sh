#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cstack=no|fp|dwarf on the Deflater workload (java-test/mixed, level 9), interleaved rounds:
#   bench/run_cstack_ab.sh [BUILD_DIR] [ROUNDS] [SECONDS] [JDK_HOME...]
#   (defaults: build, 5, 4, the JDK 17 and Temurin 25 of the VM)
# Per run: process CPU (user+sys, /usr/bin/time), the workload's rounds, samples, the handler's
# "mean CPU ns in handler per signal" and the unwind tables built (meta.extra); then medians per
# JDK and setting. Interval 10 ms, mode=cpu.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
rounds=${2:-5}
secs=${3:-4}
shift $(($# < 3 ? $# : 3))
jdks=("$@")
[[ ${#jdks[@]} -gt 0 ]] || jdks=(/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
for ((r = 1; r <= rounds; r++)); do
    for jdk in "${jdks[@]}"; do
        for cs in no fp dwarf; do
            p=$out/$(basename "$jdk")-$cs-$r.json.gz
            /usr/bin/time -f "%U %S" -o "$p.time" "$jdk/bin/java" \
                "-agentpath:$build/agent/libfxagent.so=mode=cpu,interval=10ms,quiet,cstack=$cs,file=$p" \
                -jar "$build/java-test/fxagent-mixed.jar" deflate "$secs" >"$p.out"
        done
    done
done
python3 - "$out" <<'PY'
import glob, gzip, json, os, re, statistics, sys
rows = {}
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json.gz"))):
    jdk, cs, _ = os.path.basename(p)[:-8].rsplit("-", 2)
    u, s = map(float, open(p + ".time").read().split()[-2:])
    work = int(re.search(r"rounds=(\d+)", open(p + ".out").read()).group(1))
    ex = {e["label"]: e["value"] for g in json.load(gzip.open(p))["meta"].get("extra", [])
          for e in g["entries"]}
    rows.setdefault((jdk, cs), []).append((u + s, work, ex.get("mean CPU ns in handler per signal"),
                                           ex.get("unwind table build time (us)", 0)))
print("| JDK | cstack | process CPU s | rounds | handler ns/signal | table build ms | runs |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for (jdk, cs), v in sorted(rows.items()):
    med = lambda i: statistics.median(x[i] for x in v if x[i] is not None)
    print(f"| {jdk} | {cs} | {med(0):.2f} | {med(1):.0f} | {med(2):.0f} | {med(3) / 1000:.1f} | {len(v)} |")
PY
