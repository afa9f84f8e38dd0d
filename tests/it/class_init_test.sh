#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent runs no class initializer of its own accord: with a CPU-bound workload (CpuSingle of
# the bench jar: no virtual thread, no allocation, so no GC) under mode=cpu and mode=wall, -Xlog:class+init shows no class initialized by
# an agent thread ("fxagent ..."). JNI's FindClass/GetMethodID initialize what they touch; on
# JDK 21+ the agent once looked up java.lang.VirtualThread.run at its first drain pass, which ran
# VirtualThread's static initializer (its default scheduler, ~35 more classes, lambdas spun,
# ~40 ms of CPU) in every JVM, before the application could set jdk.virtualThreadScheduler.*.
# (At a GC, the GC markers read the collector and cause through java.lang.management, which
# initializes that stack once: documented in docs/DESIGN-NOTES.md, and why this run has no GC.)
# The control: the log shows class initialization at all (-Xlog works on this JDK); a GC, if one
# happens, ends what is counted (-Xlog:gc gives its time).
# usage: class_init_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.class_init.jdk$(fx_jdk_major "$1")" "$1"

for mode in cpu wall; do
    it_run "$mode" "$IT_JDK/bin/java" "-Xlog:class+init=info:file=$mode.init.log" \
        "-Xlog:gc:file=$mode.gc.log" -Xms1g -Xmx1g -Xmn768m \
        "-agentpath:$FXAGENT_LIB=mode=$mode,interval=10ms,quiet,file=$mode.json.gz" \
        -cp "$FXAGENT_BENCH_JAR" fxagent.bench.CpuSingle rounds=150
    [[ $IT_RC -eq 0 ]] || it_fail "$mode: java exited $IT_RC"
    n=$(grep -c 'Initializing' "$mode.init.log" || true)
    [[ $n -gt 100 ]] || it_fail "$mode: -Xlog:class+init logged $n initializations (expected > 100)"
    # A GC (unlikely with this heap, but a metadata threshold can start one) lets the GC markers
    # initialize java.lang.management: only what came before the first pause counts.
    gc_s=$(sed -n 's/^\[\([0-9.]*\)s\].*Pause.*/\1/p' "$mode.gc.log" | head -n 1)
    [[ -z $gc_s ]] || echo "$IT_NAME: $mode: a GC at ${gc_s}s: initializations after it not counted"
    ours=$(grep 'Initializing' "$mode.init.log" | grep 'by thread "fxagent' |
        awk -v gc="${gc_s:-1e9}" '{ t = substr($1, 2) + 0 } t < gc + 0' || true)
    if [[ -n $ours ]]; then
        echo "$ours" | head -n 20 >&2
        it_fail "$mode: $(echo "$ours" | wc -l) classes initialized by an agent thread (above)"
    fi
    echo "$IT_NAME: ok: $mode: $n classes initialized, none by an agent thread"
done
it_no_hs_err
echo "$IT_NAME: OK"
