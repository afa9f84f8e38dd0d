#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What sampling the threads that are not Java threads costs (issue 16 items 4-5,
# agent/sampling/vm_threads.c): javac (a fixed job: the java-test sources, -J-Xint off, 10 ms cpu
# mode) under three agents in interleaved rounds: none, BASE (a build without vm_threads.c) and
# NOW (this build); process CPU (user + system, /usr/bin/time) per run, median per setting.
# Also prints NOW's own figures of the last run (meta.extra "Threads that are not Java threads":
# scans, mean and max scan time).
# usage: run_vm_threads_cost.sh JDK_HOME BASE_LIB NOW_LIB [ROUNDS]   (ROUNDS default 5)
set -euo pipefail
jdk=$1 base=$2 now=$3 rounds=${4:-5}
src=$(cd "$(dirname "$0")/.." && pwd)/java-test
work=$(mktemp -d /tmp/vtcost.XXXX)
trap 'rm -rf "$work"' EXIT
find "$src" -name '*.java' -not -path '*/jtreg/*' >"$work/files"
declare -A cpu
one() { # NAME AGENT_LIB|-
    local opt=() t
    [[ $2 != - ]] && opt=("-J-agentpath:$2=mode=cpu,interval=10ms,quiet,file=$work/$1.json.gz")
    rm -rf "$work/out"
    /usr/bin/time -f '%U %S' -o "$work/t" "$jdk/bin/javac" "${opt[@]}" -d "$work/out" \
        "@$work/files" 2>/dev/null || true
    t=$(awk '{printf "%.3f", $1 + $2}' "$work/t")
    cpu[$1]+="$t "
}
for ((r = 1; r <= rounds; r++)); do
    one none -
    one base "$base"
    one now "$now"
done
for k in none base now; do
    printf '%-5s %s median %s\n' "$k" "${cpu[$k]}" \
        "$(tr ' ' '\n' <<<"${cpu[$k]}" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
python3 - "$work/now.json.gz" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
for g in d["meta"].get("extra", []):
    if g["label"] == "Threads that are not Java threads":
        for e in g["entries"]:
            print(f"  {e['label']}: {e['value']}")
print("  tracks:", sorted(t["name"] for t in d["threads"] if t["samples"]["stack"]))
PY
