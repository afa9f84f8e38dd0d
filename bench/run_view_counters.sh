#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The views' own price from the agent's counters (thread CPU time: less moved by the load than
# whole-JVM ratios, yet at load ~20 it drifts 10-38 us per allocation sample between runs; issue
# 31, docs/BENCHMARKS.md "The allocation callback, CompiledMethodLoad and the lock view"): the
# alloc workload (AllocWorkload rounds N, alloc=512k) and the lock workload (LockWorkload bench
# 4 threads, lock=10ms), each library given as LABEL=PATH (e.g. a build before a change and one
# after), ROUNDS interleaved rounds; prints per run the load average and the meta.extra entries
# that price the views: the allocation callback's mean thread CPU per sample and its native
# walk's, the signal handler's mean CPU per signal, the lock view's and the drain's counters.
# usage: bench/run_view_counters.sh BUILD_DIR JDK_HOME ROUNDS LABEL=LIB [LABEL=LIB...]
set -euo pipefail
build=$1 jdk=$2 rounds=$3
shift 3
out=$(mktemp -d -t fxviewc.XXXXXX)
trap 'rm -rf "$out"' EXIT
keys='mean CPU ns|native walk in the callback: mean|drain thread CPU|CompiledMethodLoad|lock'
for ((r = 1; r <= rounds; r++)); do
    for spec in "$@"; do
        label=${spec%%=*} lib=${spec#*=}
        for work in alloc lock; do
            if [[ $work == alloc ]]; then
                args=("-agentpath:$lib=alloc=512k,quiet,file=$out/p.json.gz"
                    -cp "$build/java-test/fxagent-alloc.jar" fxagent.alloc.AllocWorkload rounds 10000)
            else
                args=("-agentpath:$lib=lock=10ms,quiet,file=$out/p.json.gz"
                    -cp "$build/java-test/fxagent-locks.jar" fxagent.locks.LockWorkload bench 4 3)
            fi
            load=$(cut -d' ' -f1 /proc/loadavg)
            "$jdk/bin/java" "${args[@]}" >/dev/null 2>&1
            python3 - "$out/p.json.gz" "$label $work round $r load $load" "$keys" <<'PY'
import gzip, json, re, sys
p = json.load(gzip.open(sys.argv[1]))
print(sys.argv[2])
for g in p["meta"].get("extra", []):
    for e in g["entries"]:
        if re.search(sys.argv[3], e["label"], re.I):
            print(f"  {g['label']}: {e['label']} = {e['value']}")
PY
        done
    done
done
