#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof convert REC.jfr against the JDK's `jfr summary` on a real recording of SIZE_MB MiB or
# more (issue 35), one command:
#   bench/run_jfr_convert.sh BUILD_DIR [--jdk HOME] [--size-mb N] [--threads N] [--runs N]
#                            [--recording REC.jfr | --keep REC.jfr] [--base FXPROF]
# Records (unless --recording names one made before; --keep REC: keeps it there) JDK HOME's
# (default Temurin 25) javac compiling java.base's java.util sources from HOME/lib/src.zip again
# and again on THREADS threads (default 12) of one JVM (bench/JfrBigWorkload.java, which also
# takes a shared lock, sleeps and parks now and then), settings=profile at high rates: execution
# and native method samples every 1 ms, the TLAB allocation events on, ObjectAllocationSample at
# 100000/s, monitor, park and sleep events at a threshold of 0; on JDK 25 CPU-time samples every
# 1 ms, every method of javac's Types, Resolve, Name, List, Scope.ScopeImpl and Symbol traced
# (jdk.MethodTrace: most of the bytes) and Attr's timed (jdk.MethodTiming). It stops when its
# repository holds SIZE_MB MiB (default 1000; JFR's default maxchunksize: chunks of 12 to 30 MB).
# Written under /var/tmp (TMPDIR overrides), outside the repository, deleted at the end.
# Then RUNS (default 3) alternating runs of fxprof convert and jfr summary, each under
# /usr/bin/time (wall, user, sys, max RSS), the load average before each (--runs 0: record
# only, with --keep); --base FXPROF: another build's fxprof (a copy of main's) timed in each run
# as well, its profile's gunzipped JSON equal to this build's but for "pid" and a marker stack's
# time (data.cause.time: written only for an END marker since session 17, where a base of
# before wrote it for all: dropped from both before they are compared); every count per event
# type checked against jfr summary's (tests/it/jfr_check.py --counts-only --meta-only: Profile
# Info's counts; the GBs of JSON are not loaded); and the first chunk
# cut out and converted alone, the stack of its every execution, native method, CPU-time and
# allocation sample checked frame by frame against jfr print --json, and a marker per event of
# each type (a sample of the stacks at little cost; not the markers' stacks: jfr print writes
# GBs of JSON for them).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: run_jfr_convert.sh BUILD_DIR [--jdk HOME] [--size-mb N] [--threads N] [--runs N] [--recording REC.jfr | --keep REC.jfr] [--base FXPROF]"
build=$(cd "${1:?$usage}" && pwd)
shift
jdk=/usr/lib/jvm/temurin-25-jdk-amd64 size_mb=1000 threads=12 runs=3 rec="" keep="" base=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --jdk) jdk=$2 ;;
        --size-mb) size_mb=$2 ;;
        --threads) threads=$2 ;;
        --runs) runs=$2 ;;
        --recording) rec=$(realpath "$2") ;;
        --keep) keep=$(realpath "$2") ;;
        --base) base=$(realpath "$2") ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
    shift 2
done
fxprof=$build/cli/fxprof
[[ -x $fxprof ]] || { echo "no $fxprof: build first" >&2; exit 1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
work=$(mktemp -d "${TMPDIR:-/var/tmp}/fxprof-jfr-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

if [[ -z $rec ]]; then
    major=$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 |
        sed -n 's/^ *java.specification.version = //p')
    python3 - "$jdk/lib/src.zip" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open("files.txt", "w") as f:
    for n in z.namelist():
        if (n.startswith("java.base/java/util/") and n.endswith(".java")
                and not n.endswith("-info.java") and "/jar/" not in n):
            f.write(z.extract(n, "src") + "\n")
EOF
    s="filename=$work/rec.jfr,maxsize=0,settings=profile"
    s+=",jdk.ExecutionSample#period=1ms,jdk.NativeMethodSample#period=1ms"
    s+=",jdk.ObjectAllocationInNewTLAB#enabled=true,jdk.ObjectAllocationOutsideTLAB#enabled=true"
    s+=",jdk.ObjectAllocationSample#throttle=100000/s"
    s+=",jdk.JavaMonitorEnter#threshold=0ms,jdk.JavaMonitorWait#threshold=0ms"
    s+=",jdk.ThreadPark#threshold=0ms,jdk.ThreadSleep#threshold=0ms"
    if [[ $major -ge 25 ]]; then
        s+=",jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=1ms"
        s+=",jdk.MethodTrace#filter=com.sun.tools.javac.code.Types;com.sun.tools.javac.comp.Resolve;com.sun.tools.javac.util.Name;com.sun.tools.javac.util.List;com.sun.tools.javac.code.Scope\$ScopeImpl;com.sun.tools.javac.code.Symbol"
        s+=",jdk.MethodTiming#filter=com.sun.tools.javac.comp.Attr"
    fi
    mkdir repo
    echo "recording JDK $major javac on $(wc -l <files.txt) files, $threads threads, to ${size_mb} MB; load: $(load)"
    start=$(date +%s)
    "$jdk/bin/java" -Xmx8g -XX:FlightRecorderOptions:repository="$work/repo" \
        "-XX:StartFlightRecording=$s" "$root/bench/JfrBigWorkload.java" "$threads" out stop \
        @files.txt src/java.base >workload.log 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && [[ $(du -sm repo | cut -f1) -lt $size_mb ]]; do sleep 2; done
    touch stop
    wait "$pid" || { tail -5 workload.log >&2; exit 1; }
    rm -rf src out
    rec=$work/rec.jfr
    [[ -z $keep ]] || { mv "$rec" "$keep"; rec=$keep; }
    echo "recorded in $(($(date +%s) - start)) s: $(grep '^JfrBigWorkload' workload.log); load: $(load)"
fi
[[ $runs -gt 0 ]] || exit 0
size=$(stat -c %s "$rec")
# the gunzipped JSON, the converter's own pid aside, and the time of a marker's stack (written
# by builds before session 17 for every marker, since then only for an END marker's); cut into
# lines at each '}' first (the JSON is one line of GBs, and holds no raw newline) so that sed
# never holds the whole of it
json_sum() {
    gzip -dc "$1" | tr '}' '\n' |
        sed -E 's/"pid":"?[0-9]+"?/"pid":X/g; s/"cause":\{"time":[-0-9.e+]+,/"cause":{/g' |
        md5sum | cut -d' ' -f1
}
echo "== $rec: $size bytes ($((size / 1048576)) MiB)"
for i in $(seq "$runs"); do
    echo "run $i, load before: $(load)"
    /usr/bin/time -o "$work/time" -f "fxprof convert: %e s wall, %U s user, %S s sys, %M KB max RSS" \
        "$fxprof" convert "$rec" -o "$work/big.json.gz" 2>"$work/convert.err" ||
        { cat "$work/convert.err" >&2; exit 1; }
    cat "$work/time"
    echo "  profile written: $(stat -c %s "$work/big.json.gz") bytes gzipped, $(gzip -dc "$work/big.json.gz" | wc -c) bytes of JSON"
    if [[ -n $base ]]; then
        echo "  load before the base: $(load)"
        /usr/bin/time -o "$work/time" -f "base convert:   %e s wall, %U s user, %S s sys, %M KB max RSS" \
            "$base" convert "$rec" -o "$work/base.json.gz" 2>"$work/convert.err" ||
            { cat "$work/convert.err" >&2; exit 1; }
        cat "$work/time"
        [[ $(json_sum "$work/big.json.gz") == "$(json_sum "$work/base.json.gz")" ]] ||
            { echo "the base's profile differs from this build's (gunzipped, pid and cause times aside)" >&2; exit 1; }
        echo "  the base's profile equals this build's (gunzipped JSON, pid and cause times aside)"
        rm -f "$work/base.json.gz"
    fi
    /usr/bin/time -o "$work/time" -f "jfr summary:    %e s wall, %U s user, %S s sys, %M KB max RSS" \
        "$jdk/bin/jfr" summary "$rec" >"$work/big.summary"
    cat "$work/time"
done
grep -E '^ (Chunks|Size|Start|Duration):' "$work/big.summary" || true
if python3 "$root/tests/it/jfr_check.py" --counts-only --meta-only "$work/big.json.gz" \
    "$work/big.summary" >"$work/check.log"; then
    echo "counts per event type: all $(grep -c ': ok: ' "$work/check.log") checks equal jfr summary's"
else
    grep FAIL "$work/check.log"
    exit 1
fi
# The first chunk alone (its header says its size at offset 8): the stacks of its samples frame
# by frame against jfr print's.
python3 - "$rec" "$work/head.jfr" <<'EOF'
import struct, sys
with open(sys.argv[1], "rb") as f, open(sys.argv[2], "wb") as out:
    head = f.read(68)
    out.write(head + f.read(struct.unpack(">q", head[8:16])[0] - 68))
EOF
"$fxprof" convert "$work/head.jfr" -o "$work/head.json.gz" 2>/dev/null
"$jdk/bin/jfr" summary "$work/head.jfr" >"$work/head.summary"
"$jdk/bin/jfr" print --json --stack-depth 4096 \
    --events jdk.ExecutionSample,jdk.NativeMethodSample,jdk.CPUTimeSample,jdk.ObjectAllocationSample "$work/head.jfr" >"$work/head.print.json"
if python3 "$root/tests/it/jfr_check.py" --min-threads 1 "$work/head.json.gz" "$work/head.summary" \
    "$work/head.print.json" >"$work/head.log"; then
    echo "first chunk ($(stat -c %s "$work/head.jfr") bytes): all $(grep -c ': ok: ' "$work/head.log") checks (counts, every sample's stack frame by frame) equal jfr's"
else
    grep FAIL "$work/head.log" | head -20
    exit 1
fi
echo "load after: $(load)"
