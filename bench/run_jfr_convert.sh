#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof convert REC.jfr against the JDK's `jfr summary` on large recordings (issue 35), one
# command:  bench/run_jfr_convert.sh BUILD_DIR [JDK_HOME] [COPIES...]   (default 100 900)
# Records java-test/alloc's AllocWorkload for 10 s with settings=profile, execution samples
# every 1 ms and the TLAB allocation events on (about 1.2 MB, one chunk), then for each COPIES
# concatenates that many copies (JFR recordings concatenate: the result is a recording of
# COPIES chunks, each with its own metadata and constant pools, as `jfr summary` confirms),
# and times both readers three times each with /usr/bin/time (wall, user, sys, max RSS).
# The file is read from the page cache (it was just written). Every run checks that the
# profile's counts per event type equal jfr summary's (tests/it/jfr_check.py --counts-only).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: run_jfr_convert.sh BUILD_DIR [JDK_HOME] [COPIES...]}" && pwd)
jdk=${2:-/usr/lib/jvm/temurin-25-jdk-amd64}
shift $(($# < 2 ? $# : 2))
copies=("$@")
[[ ${#copies[@]} -gt 0 ]] || copies=(100 900)
fxprof=$build/cli/fxprof
jar=$build/java-test/fxagent-alloc.jar
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$jdk/bin/java" "-XX:StartFlightRecording=filename=base.jfr,settings=profile,jdk.ExecutionSample#period=1ms,jdk.ObjectAllocationInNewTLAB#enabled=true,jdk.ObjectAllocationOutsideTLAB#enabled=true" \
    -cp "$jar" fxagent.alloc.AllocWorkload bench 10 >/dev/null 2>&1
echo "base recording: $(stat -c %s base.jfr) bytes; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${copies[@]}"; do
    for _ in $(seq "$n"); do cat base.jfr; done >big.jfr
    size=$(stat -c %s big.jfr)
    echo "== $n chunks, $size bytes"
    for _ in 1 2 3; do
        /usr/bin/time -f "fxprof convert: %e s wall, %U s user, %S s sys, %M KB max RSS" \
            "$fxprof" convert big.jfr -o big.json.gz 2>&1 | grep -v '^fxprof: wrote'
        /usr/bin/time -f "jfr summary:    %e s wall, %U s user, %S s sys, %M KB max RSS" \
            "$jdk/bin/jfr" summary big.jfr 2>&1 >big.summary
    done
    if python3 "$root/tests/it/jfr_check.py" --counts-only big.json.gz big.summary >check.log; then
        echo "counts per event type: all $(grep -c ': ok: ' check.log) checks equal jfr summary's"
    else
        grep FAIL check.log
    fi
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
