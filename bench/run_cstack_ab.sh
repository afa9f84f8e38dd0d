#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cstack=no|fp|dwarf on the Deflater workload (java-test/mixed, level 9), interleaved rounds:
#   bench/run_cstack_ab.sh [BUILD_DIR] [ROUNDS] [SECONDS] [JDK_HOME...]
#   (defaults: build, 5, 4, the JDK 17 and Temurin 25 of the VM)
# Per run: process CPU (user+sys, /usr/bin/time), the workload's rounds, samples, the handler's
# "mean CPU ns in handler per signal" and the unwind tables built (meta.extra); then medians per
# JDK and setting (min–max in brackets for CPU and handler). Interval 10 ms, mode=cpu. The
# environment changes the setup:
#   AB_MODE (cpu), AB_WORKLOAD (deflate), AB_JAVA_OPTS (none), AB_SETTINGS ("no fp dwarf"; "none"
#   is a run without the agent); wall mode with 50 parked threads, as docs/BENCHMARKS.md "Wall
#   mode with native frames" ran it:
#   AB_MODE=wall AB_WORKLOAD=wait AB_SETTINGS="none no fp dwarf" \
#   AB_JAVA_OPTS="-Dfxagent.mixed.parked=50 -Dfxagent.mixed.spin=false" bench/run_cstack_ab.sh build 5 10
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
        for cs in ${AB_SETTINGS:-no fp dwarf}; do
            p=$out/$(basename "$jdk")-$cs-$r.json.gz
            agent=("-agentpath:$build/agent/libfxagent.so=mode=${AB_MODE:-cpu},interval=10ms,quiet,cstack=$cs,file=$p")
            [[ $cs != none ]] || agent=()
            # shellcheck disable=SC2086 # AB_JAVA_OPTS: words on purpose
            /usr/bin/time -f "%U %S" -o "$p.time" "$jdk/bin/java" "${agent[@]}" ${AB_JAVA_OPTS:-} \
                -jar "$build/java-test/fxagent-mixed.jar" "${AB_WORKLOAD:-deflate}" "$secs" >"$p.out"
        done
    done
done
python3 - "$out" <<'PY'
import glob, gzip, json, os, re, statistics, sys
rows = {}
for t in sorted(glob.glob(os.path.join(sys.argv[1], "*.json.gz.time"))):
    p = t[:-5]
    jdk, cs, _ = os.path.basename(p)[:-8].rsplit("-", 2)
    u, s = map(float, open(t).read().split()[-2:])
    work = int(re.search(r"rounds=(\d+)", open(p + ".out").read()).group(1))
    doc = json.load(gzip.open(p)) if os.path.exists(p) else {"meta": {}, "threads": []}
    ex = {e["label"]: e["value"] for g in doc["meta"].get("extra", []) for e in g["entries"]}
    n = sum(len(th["samples"]["stack"]) for th in doc["threads"]) if doc["threads"] else None
    rows.setdefault((jdk, cs), []).append((u + s, work, ex.get("mean CPU ns in handler per signal"),
                                           ex.get("unwind table build time (us, this JVM)",
                                                  ex.get("unwind table build time (us)", 0)), n))
print("| JDK | cstack | process CPU s | rounds | handler ns/signal | table build ms | samples | runs |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for (jdk, cs), v in sorted(rows.items()):
    def med(i, fmt, scale=1, spread=False):
        xs = [x[i] / scale for x in v if x[i] is not None]
        if not xs:
            return "-"
        m = format(statistics.median(xs), fmt)
        return f"{m} ({min(xs):{fmt}}–{max(xs):{fmt}})" if spread else m
    print(f"| {jdk} | {cs} | {med(0, '.2f', spread=True)} | {med(1, '.0f')} | "
          f"{med(2, '.0f', spread=True)} | "
          f"{med(3, '.1f', 1000)} | {med(4, '.0f')} | {len(v)} |")
PY
