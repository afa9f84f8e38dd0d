#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a per-thread perf event and its mmap ring cost threads that mostly sleep
# (bench/switch_cost.c; docs/BENCHMARKS.md, issue 16's ManyThreads), one command:
#   bench/run_switch_cost.sh [RUNS]     (default 7; about 3 s per run, 4 configurations)
# Builds bench/ standalone into build-bench/, runs none / perf / ring / timer with 500 threads waking
# 150 times each, interleaved, and prints each one's median process CPU and its cost per wake-up
# against none.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-7}
cmake -S "$root/bench" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$root/build-bench" -j2 --target switch_cost >/dev/null
bin=$root/build-bench/switch_cost
threads=500
wakeups=150
out=$(mktemp)
for ((r = 0; r < runs; r++)); do
    for k in none perf ring timer; do
        "$bin" "$k" "$threads" "$wakeups" >>"$out"
    done
done
python3 - "$out" "$threads" "$wakeups" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"kind=(\S+) .* cpu_s=([\d.]+)", line)
    if m:
        runs.setdefault(m.group(1), []).append(float(m.group(2)))
wakes = int(sys.argv[2]) * int(sys.argv[3])
none = statistics.median(runs["none"])
print(f"{'kind':6} {'median CPU s':>12} {'min-max':>14} {'us per wake-up over none':>26}")
for k in ("none", "perf", "ring", "timer"):
    v = runs[k]
    m = statistics.median(v)
    print(f"{k:6} {m:12.3f} {min(v):6.3f}-{max(v):6.3f} {(m - none) / wakes * 1e6:26.2f}")
PY
rm -f "$out"
