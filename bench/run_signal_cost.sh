#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The kernel's cost of one sampling signal (bench/signal_cost.c), one command:
#   bench/run_signal_cost.sh [RUNS]      (default 7; about 2 s per run, 9 configurations)
# Builds bench/ standalone into build-bench/ (like run_writer_bench.sh), then runs each
# configuration RUNS times interleaved and prints, per configuration, the median CPU time of the
# fixed loop, the median signal count, and (median CPU − median CPU without signals) / signals.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-7}
cmake -S "$root/bench" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$root/build-bench" -j2 --target signal_cost >/dev/null
bin=$root/build-bench/signal_cost
iters=500000000
configs=("none 1000000" "perf 1000000" "perf 10000000" "timer 1000000" "timer 10000000"
         "perfchain 1000000")
# The same with one-byte write(2)s to /dev/null as the work (overflows in the kernel, callchains
# with frames): perf against perfchain is what kstack=yes adds per signal.
sys_iters=4000000
sys_configs=("none 1000000" "perf 1000000" "perfchain 1000000")
out=$(mktemp)
for ((r = 0; r < runs; r++)); do
    for c in "${configs[@]}"; do
        # shellcheck disable=SC2086
        "$bin" $c $iters >>"$out"
    done
    for c in "${sys_configs[@]}"; do
        # shellcheck disable=SC2086
        "$bin" $c $sys_iters sys >>"$out"
    done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(uname -r); $runs runs"
python3 - "$out" <<'PY'
import re, statistics, sys
rows = {}
take = {}
for line in open(sys.argv[1]):
    kv = dict(re.findall(r"(\w+)=(\S+)", line))
    if kv["source"].startswith("perfchain"):
        take.setdefault(kv["source"], []).append((float(kv["take_ns"]),
                                                  int(kv["kernel_frames"]) / max(1, int(kv["signals"]))))
    rows.setdefault((kv["source"], int(kv["interval_ns"])), []).append(
        (float(kv["cpu_s"]), int(kv["signals"])))
base = {w: statistics.median(c for c, _ in rows[("none" + w, 1000000)]) for w in ("", "-sys")}
print("| signal source | interval | loop CPU s, median (min-max) | signals | kernel cost per signal µs |")
print("| --- | ---: | ---: | ---: | ---: |")
for (src, iv), v in rows.items():
    cpu = [c for c, _ in v]
    sig = statistics.median(s for _, s in v)
    med = statistics.median(cpu)
    per = "–" if sig == 0 else f"{(med - base[src[src.find('-'):] if '-' in src else '']) / sig * 1e6:.1f}"
    print(f"| {src} | {iv / 1e6:g} ms | {med:.3f} ({min(cpu):.3f}-{max(cpu):.3f}) | {sig:.0f} | {per} |")
print("\n| perfchain workload | ring read in the handler, ns per signal, median (min-max) | kernel frames per signal |")
print("| --- | ---: | ---: |")
for src, v in take.items():
    ns = [t for t, _ in v]
    print(f"| {src} | {statistics.median(ns):.0f} ({min(ns):.0f}-{max(ns):.0f}) | "
          f"{statistics.median(f for _, f in v):.1f} |")
PY
rm -f "$out"
# What each call the handler may make costs (median of RUNS runs of 1,000,000 calls each).
for ((r = 0; r < runs; r++)); do "$bin" clocks 1000000; done | python3 -c '
import re, statistics, sys
rows = [dict((k, float(v)) for k, v in re.findall(r"(\w+)=(\S+)", l)) for l in sys.stdin]
print("\n| call | ns per call, median (min-max) |\n| --- | ---: |")
for k, name in (("monotonic_ns", "clock_gettime(CLOCK_MONOTONIC) (vDSO)"),
                ("thread_cpu_ns", "clock_gettime(CLOCK_THREAD_CPUTIME_ID) (system call)"),
                ("gettid_ns", "syscall(SYS_gettid)")):
    v = [r[k] for r in rows]
    print(f"| {name} | {statistics.median(v):.0f} ({min(v):.0f}-{max(v):.0f}) |")
'
