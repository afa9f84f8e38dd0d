#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds bench_writer standalone (default RelWithDebInfo: -O2 -g, as the agent ships), runs it
# N times (default 5) and prints the machine, the exact command, and the median and spread
# (min..max) of every figure as a Markdown table for docs/BENCHMARKS.md.
# usage: bench/run_writer_bench.sh [--runs N] [--build-dir DIR] [--build-type TYPE] [--out-dir DIR]
#                                  [-- bench_writer args, e.g. --samples 1000000 --stacks 20000]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=5
build=$root/build-bench
type=RelWithDebInfo
outdir=
while [[ $# -gt 0 ]]; do
    case $1 in
    --runs) runs=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --build-type) type=$2; shift 2 ;;
    --out-dir) outdir=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [--runs N] [--build-dir DIR] [--build-type TYPE] [--out-dir DIR] [-- ARGS]" >&2
       exit 2 ;;
    esac
done

cmake -S "$root/bench" -B "$build" -DCMAKE_BUILD_TYPE="$type" >/dev/null
cmake --build "$build" -j2 --target bench_writer >/dev/null
work=$(mktemp -d /tmp/fxbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
outdir=${outdir:-$work}

cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
upper=$(tr '[:lower:]' '[:upper:]' <<<"$type")
flags=$(sed -n "s/^CMAKE_C_FLAGS_${upper}:[A-Z]*=//p" "$build/CMakeCache.txt")
echo "### Machine"
echo
echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), nproc $(nproc)"
echo "- RAM: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
echo "- Kernel: $(uname -sr); output folder: $outdir ($(df -T "$outdir" | awk 'NR == 2 {print $2}'))"
echo "- Compiler: $("$cc" --version | head -n 1); build type $type ($flags); zlib $(
    python3 -c 'import zlib; print(zlib.ZLIB_RUNTIME_VERSION)' 2>/dev/null || echo '?')"
echo "- Command: \`bench/run_writer_bench.sh --runs $runs${*:+ -- $*}\` ->" \
    "\`bench_writer --out-dir DIR${*:+ $*}\`, $runs runs"
echo

results=$work/results.jsonl
for i in $(seq 1 "$runs"); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    line=$("$build/bench_writer" --out-dir "$outdir" "$@")
    echo "${line%\}},\"loadavg_before\":$load}" >>"$results"
    echo "run $i/$runs done (load average before: $load)" >&2
done

python3 - "$results" <<'PY'
import json, statistics, sys

runs = [json.loads(l) for l in open(sys.argv[1])]
r0 = runs[0]
print(f"Model: {r0['samples']:,} samples, {r0['threads']} threads, {r0['leaf_stacks']:,} distinct "
      f"leaf stacks {r0['min_depth']}..{r0['max_depth']} frames deep ({r0['stack_rows']:,} "
      f"stack-table rows), seed {r0['seed']}; model memory "
      f"{r0['model_bytes'] / 1048576:.1f} MiB (fx_profile_memory).")
print()
rows = [
    ("build the model (baseline), wall", "build_s", "s", 3),
    ("build the model (baseline), CPU", "build_cpu_s", "s", 3),
    ("write .json.gz (fx_ff_write_file), wall", "gz_write_s", "s", 3),
    ("write .json.gz (fx_ff_write_file), CPU", "gz_write_cpu_s", "s", 3),
    ("write .json, wall", "json_write_s", "s", 3),
    ("write .json, CPU", "json_write_cpu_s", "s", 3),
    ("zlib level 6 over the same JSON bytes (baseline), wall", "zlib6_s", "s", 3),
    ("zlib level 6 over the same JSON bytes (baseline), CPU", "zlib6_cpu_s", "s", 3),
    ("zlib level 1 over the same JSON bytes, wall", "zlib1_s", "s", 3),
    ("zlib level 1 over the same JSON bytes, CPU", "zlib1_cpu_s", "s", 3),
    ("write .json.gz / zlib-6 baseline, wall", "gz_write_over_zlib6", "x", 2),
    ("write .json.gz / zlib-6 baseline, CPU", "gz_write_cpu_over_zlib6_cpu", "x", 2),
    ("write .json.gz / zlib-1, wall", "gz_write_over_zlib1", "x", 2),
    ("write .json.gz / zlib-1, CPU", "gz_write_cpu_over_zlib1_cpu", "x", 2),
    ("write .json.gz / build baseline, wall", "gz_write_over_build", "x", 2),
    ("write .json.gz / build baseline, CPU", "gz_write_cpu_over_build_cpu", "x", 2),
    ("bytes per sample, .json.gz", "gz_bytes_per_sample", "B", 2),
    ("bytes per sample, .json", "json_bytes_per_sample", "B", 2),
    ("bytes per sample, zlib level 1", None, "B", 2),
    ("peak RSS at start", "rss_start_kib", "MiB", 1),
    ("peak RSS after building the model", "rss_model_kib", "MiB", 1),
    ("peak RSS during the .json.gz write (ru_maxrss reset before it)", "rss_during_gz_write_kib", "MiB", 1),
    ("peak RSS during the .json write", "rss_during_json_write_kib", "MiB", 1),
    ("writer's own peak increment, .json.gz (VmHWM - VmRSS before)", "gz_write_peak_increment_kib", "KiB", 0),
    ("writer's own peak increment, .json", "json_write_peak_increment_kib", "KiB", 0),
    ("load average before the run", "loadavg_before", "", 2),
]
print(f"| measure ({len(runs)} runs) | median | min .. max |")
print("| --- | ---: | ---: |")
for label, key, unit, nd in rows:
    if key is None:
        vals = [r["zlib1_bytes"] / r["samples"] for r in runs]
    else:
        vals = [r[key] for r in runs]
    if unit == "MiB":
        vals = [v / 1024 for v in vals]
    if key == "loadavg_before":
        unit = ""
    med = statistics.median(vals)
    print(f"| {label} | {med:.{nd}f} {unit} | {min(vals):.{nd}f} .. {max(vals):.{nd}f} |")
med = lambda k: statistics.median(r[k] for r in runs)
level = [lv for lv, k in ((6, "zlib6_bytes"), (1, "zlib1_bytes")) if r0[k] == r0["gz_bytes"]]
print()
print(f"The writer's .json.gz is {r0['gz_bytes']:,} bytes: " +
      (f"the size zlib level {level[0]} gives for the same JSON, so that is the writer's level. "
       if level else "neither zlib level 6's nor level 1's size for the same JSON. "))
print(f"Targets: write .json.gz under 1 s -> wall {'met' if med('gz_write_s') < 1 else 'NOT met'} "
      f"(median {med('gz_write_s'):.2f} s), CPU {'met' if med('gz_write_cpu_s') < 1 else 'NOT met'} "
      f"(median {med('gz_write_cpu_s'):.2f} s); under 10 B/sample gzip'd -> "
      f"{'met' if med('gz_bytes_per_sample') < 10 else 'NOT met'} "
      f"({med('gz_bytes_per_sample'):.2f} B).")
PY
