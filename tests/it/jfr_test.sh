#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof convert REC.jfr against the JDK's own reader (issue 35). One JVM: java-test/mixed's
# MixedWorkload wait (main spins in Java, waiters block in read(2): execution and native
# method samples) recorded by JFR with settings=profile. Then, without a JVM of ours:
#   - fxprof convert writes a profile fxcheck accepts and profiler-cli loads;
#   - jfr_check.py: the interval is settings=profile's 10 ms execution sample period; every
#     event type's count equals `jfr summary`'s, each thread's execution
#     and native method samples and their stacks, frame by frame, equal `jfr print --json`'s;
#     under ZGC its concurrent GC phases and every JIT compilation (an OSR one among them) are
#     markers whose fields (phase, GC id; method, tier, OSR, code size, id) equal jfr print's;
#   - the same for tests/fuzz/corpus/jfr/01-small.jfr (truncated stack, every frame type), for
#     02-two.jfr (its chunk twice: stacks known by their bytes reused), and
#     for the demo (a second JVM, 1 s), with its allocation samples (per thread their count,
#     bytes and stacks with the class as leaf) and its markers (GC, the monitor wait of main's
#     join: one per event, as jfr summary counts them; GC, its phases, compilations and old
#     objects event by event: thread, values, stack), its heap and CPU load counters (a value per
#     jdk.GCHeapSummary, jdk.CPULoad), fxcheck accepting them; on JDK 25 with
#     its CPU-time samples as well (per thread their count and stacks) and its traced and timed
#     methods (jdk.MethodTrace, jdk.MethodTiming: their markers event by event);
#   - on JDK 25 (once: they are the same for every JDK) a JDK 25 recording of pinned virtual
#     threads (tests/it/data/pinned-jdk25.jfr): its jdk.VirtualThreadPinned markers event by
#     event; async-profiler's recordings (tests/it/data/async-profiler: its frame types, TLAB
#     allocation events, lock markers) checked the same way; and two made now with
#     FXAGENT_TEST_ASYNC_PROFILER=libasyncProfiler.so (else a SKIP line says so);
#   - fxprof summary reads the recording (the main thread's samples listed);
#   - two recordings concatenated are a two-chunk recording: counts equal jfr summary's again;
#     cut inside its second chunk it converts the first, says so, exit 0;
#   - cut inside its only chunk, a file that is not JFR named .jfr, and 200 copies with bytes
#     overwritten at random (fixed seed): one line and exit 1 or a profile, never a crash or a
#     hang (each run under timeout 20).
# usage: jfr_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
name="it.jfr.jdk$(fx_jdk_major "$1")"
it_init "$name" "$1" FXAGENT_MIXED_JAR
[[ -f "${FXAGENT_DEMO_JAR:-}" ]] || it_fail "FXAGENT_DEMO_JAR is not set to the demo jar"
[[ -x "${FXPROF:-}" ]] || it_fail "FXPROF is not set to fxprof (run through ctest)"
jfr_tool=$IT_JDK/bin/jfr
[[ -x "$jfr_tool" ]] || it_fail "no $jfr_tool"

# ZGC, a cycle every 0.5 s: its concurrent phases (jdk.GCPhaseConcurrent, Level1 and on 25
# Level2); every compilation recorded (threshold 0), main's long loop among them as an OSR one.
it_run rec "$IT_JDK/bin/java" -XX:+UseZGC -XX:ZCollectionInterval=0.5 \
    -XX:StartFlightRecording=filename=rec.jfr,settings=profile,jdk.Compilation#threshold=0ms \
    -cp "$FXAGENT_MIXED_JAR" fxagent.mixed.MixedWorkload wait 2
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
[[ -s rec.jfr ]] || it_fail "the JVM wrote no recording"

it_run convert "$FXPROF" convert rec.jfr
[[ $IT_RC -eq 0 ]] || it_fail "fxprof convert rec.jfr exited $IT_RC"
[[ -s rec.json.gz ]] || it_fail "fxprof convert wrote no rec.json.gz (the default name)"
"$FXCHECK" rec.json.gz || it_fail "fxcheck rejected rec.json.gz"

"$jfr_tool" summary rec.jfr >rec.summary || it_fail "jfr summary failed"
print_events=$(cd "$IT_DIR" && python3 -c 'import jfr_check; print(jfr_check.PRINT_EVENTS)')
"$jfr_tool" print --json --stack-depth 4096 \
    --events "jdk.ExecutionSample,jdk.NativeMethodSample,jdk.ObjectAllocationSample,$print_events" \
    rec.jfr >rec.print.json || it_fail "jfr print failed"
python3 "$IT_DIR/jfr_check.py" --label "$name" --interval-ms 10 --marker-types "$print_events" \
    --require jdk.GCPhaseConcurrent,jdk.GCPhaseConcurrentLevel1,jdk.Compilation \
    rec.json.gz rec.summary rec.print.json || it_fail "the profile differs from the JDK's reader (above)"
grep -q '"isOsr": true' rec.print.json || it_fail "no OSR compilation recorded (main's loop)"

# The hand-built recording (tests/fuzz/make_jfr_corpus.py): a truncated stack, a Latin-1 thread
# name, Interpreted, Inlined and Native frames, a line of -1; the JDK reads it too.
small=$IT_DIR/../fuzz/corpus/jfr/01-small.jfr
"$FXPROF" convert "$small" -o small.json.gz 2>small.err || it_fail "convert 01-small: $(cat small.err)"
"$jfr_tool" summary "$small" >small.summary || it_fail "jfr summary 01-small.jfr failed"
"$jfr_tool" print --json --stack-depth 4096 --events jdk.ExecutionSample,jdk.NativeMethodSample,jdk.ObjectAllocationSample \
    "$small" >small.print.json || it_fail "jfr print 01-small.jfr failed"
python3 "$IT_DIR/jfr_check.py" --label "$name.small" small.json.gz small.summary small.print.json ||
    it_fail "01-small.jfr: the profile differs from the JDK's reader (above)"
# Its chunk twice (02-two.jfr): the second chunk's stacks are known by their bytes and reused
# (cli/jfr_rawstack.c); every stack frame by frame. (03-renamed.jfr, whose second chunk's ids
# name other methods, is unit.jfr_rawstack's: the JDK's reader keeps the first chunk's names
# for ids it has seen, fxprof reads each chunk's own pools, as it always did.)
for seed in 02-two; do
    f=$IT_DIR/../fuzz/corpus/jfr/$seed.jfr
    "$FXPROF" convert "$f" -o "$seed.json.gz" 2>"$seed.err" || it_fail "convert $seed: $(cat "$seed.err")"
    "$jfr_tool" summary "$f" >"$seed.summary" || it_fail "jfr summary $seed.jfr failed"
    "$jfr_tool" print --json --stack-depth 4096 --events jdk.ExecutionSample,jdk.NativeMethodSample \
        "$f" >"$seed.print.json" || it_fail "jfr print $seed.jfr failed"
    python3 "$IT_DIR/jfr_check.py" --label "$name.$seed" "$seed.json.gz" "$seed.summary" \
        "$seed.print.json" || it_fail "$seed.jfr: the profile differs from the JDK's reader (above)"
done

# Allocation samples: the demo's worker-2 allocates (HashMap and String work); its markers
# (GC and phases, compilations, old objects) compared event by event with jfr print's.
# JDK 25 and later: its CPU-time sampler too (JEP 509), a track per thread beside it, and
# method tracing and timing (JEP 520) of worker-1's beta and gamma, alpha and worker-2's hashing.
# The JDK's own TLAB events on as well: counted, not converted (the allocations are
# jdk.ObjectAllocationSample's alone, as jfr print's).
cpu_opts=",jdk.ObjectAllocationInNewTLAB#enabled=true" cpu_events="" min_cpu=0
require=jdk.GarbageCollection,jdk.GCPhasePause,jdk.GCHeapSummary,jdk.CPULoad,jdk.ObjectAllocationInNewTLAB
if [[ ${IT_MAJOR:-0} -ge 25 ]]; then
    cpu_opts+=",jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=10ms"
    cpu_opts+=",jdk.MethodTrace#filter=fxagent.demo.Demo::beta;fxagent.demo.Demo::gamma"
    cpu_opts+=",jdk.MethodTiming#filter=fxagent.demo.Demo::alpha;fxagent.demo.Demo::hashing"
    cpu_events=",jdk.CPUTimeSample" min_cpu=20 require+=,jdk.MethodTrace,jdk.MethodTiming
fi
it_run alloc "$IT_JDK/bin/java" "-XX:StartFlightRecording=filename=alloc.jfr,settings=profile$cpu_opts" \
    -cp "$FXAGENT_DEMO_JAR" fxagent.demo.Demo 1
[[ $IT_RC -eq 0 ]] || it_fail "java (demo) exited $IT_RC"
"$FXPROF" convert alloc.jfr 2>alloc-convert.err || it_fail "convert alloc.jfr: $(cat alloc-convert.err)"
"$FXCHECK" alloc.json.gz || it_fail "fxcheck rejected alloc.json.gz (its markers, allocations)"
"$jfr_tool" summary alloc.jfr >alloc.summary || it_fail "jfr summary alloc.jfr failed"
"$jfr_tool" print --json --stack-depth 4096 \
    --events "jdk.ExecutionSample,jdk.NativeMethodSample,jdk.ObjectAllocationSample$cpu_events,$print_events" \
    alloc.jfr >alloc.print.json || it_fail "jfr print alloc.jfr failed"
python3 "$IT_DIR/jfr_check.py" --label "$name.alloc" --min-allocs 100 --min-cpu "$min_cpu" \
    --marker-types "$print_events" --require "$require" \
    alloc.json.gz alloc.summary alloc.print.json || it_fail "alloc.jfr: the profile differs from the JDK's reader (above)"

# async-profiler's JFR (its own writer: kernel, C++ and library frames, TLAB allocation events,
# lock events): the two recordings committed (tests/it/data/async-profiler/README.md), and two
# made now on this JDK when FXAGENT_TEST_ASYNC_PROFILER (or the benches' FXAGENT_BENCH_ASYNC_PROFILER)
# names libasyncProfiler.so (async-profiler is never in the repository).
ap_check() { # FILE REQUIRED_TYPES
    local f=$1 label
    label="$name.ap.$(basename "$f" .jfr)"
    "$FXPROF" convert "$f" -o "$label.json.gz" 2>"$label.err" || it_fail "convert $f: $(cat "$label.err")"
    "$FXCHECK" "$label.json.gz" || it_fail "fxcheck rejected $label.json.gz"
    "$jfr_tool" summary "$f" >"$label.summary" || it_fail "jfr summary $f failed"
    "$jfr_tool" print --json --stack-depth 4096 \
        --events "jdk.ExecutionSample,jdk.NativeMethodSample,jdk.ObjectAllocationInNewTLAB,jdk.ObjectAllocationOutsideTLAB,$print_events" \
        "$f" >"$label.print.json" || it_fail "jfr print $f failed"
    python3 "$IT_DIR/jfr_check.py" --async-profiler --label "$label" --marker-types "$print_events" \
        --require "$2" "$label.json.gz" "$label.summary" "$label.print.json" ||
        it_fail "$f: the profile differs from the JDK's reader (above)"
}
# The committed recordings are the same for every JDK: checked once, by the newest JDK's run
# (CI time), with that JDK's jfr.
pcli_more=()
if [[ ${IT_MAJOR:-0} -ge 25 ]]; then
    ap_data=$IT_DIR/data/async-profiler
    ap_check "$ap_data/demo-jdk17.jfr" jdk.ExecutionSample,jdk.ObjectAllocationInNewTLAB,jdk.GCHeapSummary
    ap_check "$ap_data/locks-jdk17.jfr" jdk.ExecutionSample,jdk.JavaMonitorEnter,jdk.ThreadPark
    # jdk.VirtualThreadPinned (tests/it/data/pinned-jdk25.jfr, 123 KB: JDK 25, settings=none with
    # only that event on, of java-test/vthreads' "pinned 1": a virtual thread parked in a class
    # initializer): one marker per event with its operation, reason, carrier and stack.
    pinned=$IT_DIR/data/pinned-jdk25.jfr
    "$FXPROF" convert "$pinned" -o pinned.json.gz 2>pinned.err || it_fail "convert $pinned: $(cat pinned.err)"
    "$jfr_tool" summary "$pinned" >pinned.summary || it_fail "jfr summary $pinned failed"
    "$jfr_tool" print --json --stack-depth 4096 --events "jdk.ExecutionSample,$print_events" "$pinned" \
        >pinned.print.json || it_fail "jfr print $pinned failed"
    python3 "$IT_DIR/jfr_check.py" --label "$name.pinned" --marker-types "$print_events" --min-threads 0 \
        --require jdk.VirtualThreadPinned pinned.json.gz pinned.summary pinned.print.json ||
        it_fail "$pinned: the profile differs from the JDK's reader (above)"
    pcli_more=("$name.ap.demo-jdk17.json.gz" pinned.json.gz)
else
    echo "$name: the committed recordings (tests/it/data) are checked by it.jfr.jdk25"
fi

ap_lib=${FXAGENT_TEST_ASYNC_PROFILER:-${FXAGENT_BENCH_ASYNC_PROFILER:-}}
if [[ -z "$ap_lib" ]]; then
    echo "$name: SKIP recording with async-profiler: FXAGENT_TEST_ASYNC_PROFILER is not set (the committed recordings were checked)"
elif [[ ! -f "$ap_lib" ]]; then
    it_fail "FXAGENT_TEST_ASYNC_PROFILER=$ap_lib: no such file"
else
    ap_opts="start,event=cpu,alloc,lock,jfr,file"
    it_run ap-demo "$IT_JDK/bin/java" "-agentpath:$ap_lib=$ap_opts=ap-demo.jfr" \
        -cp "$FXAGENT_DEMO_JAR" fxagent.demo.Demo 1
    [[ $IT_RC -eq 0 ]] || it_fail "java (demo, async-profiler) exited $IT_RC"
    ap_check ap-demo.jfr jdk.ExecutionSample,jdk.ObjectAllocationInNewTLAB
    [[ -f "${FXAGENT_LOCKS_JAR:-}" ]] || it_fail "FXAGENT_LOCKS_JAR is not set to the locks jar"
    it_run ap-locks "$IT_JDK/bin/java" "-agentpath:$ap_lib=$ap_opts=ap-locks.jfr" \
        -cp "$FXAGENT_LOCKS_JAR" fxagent.locks.LockWorkload known 1
    [[ $IT_RC -eq 0 ]] || it_fail "java (locks, async-profiler) exited $IT_RC"
    ap_check ap-locks.jfr jdk.ExecutionSample,jdk.JavaMonitorEnter,jdk.ThreadPark
    echo "$name: async-profiler ($ap_lib) recordings on this JDK checked"
fi

it_run summary "$FXPROF" summary rec.jfr
[[ $IT_RC -eq 0 ]] || it_fail "fxprof summary rec.jfr exited $IT_RC"
grep -q "main" summary.out || it_fail "fxprof summary rec.jfr lists no thread main"
[[ -z "$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'fxprof-jfr-*' -newer rec.jfr)" ]] ||
    it_fail "fxprof summary left its temporary profile"

# Two chunks: JFR recordings concatenate.
cat rec.jfr rec.jfr >two.jfr
"$FXPROF" convert two.jfr -o two.json.gz 2>two.err || it_fail "convert two.jfr: $(cat two.err)"
"$jfr_tool" summary two.jfr >two.summary || it_fail "jfr summary two.jfr failed"
python3 "$IT_DIR/jfr_check.py" --label "$name.two" --counts-only two.json.gz two.summary ||
    it_fail "two.jfr: the counts differ from jfr summary's (above)"
size=$(stat -c %s rec.jfr)
head -c $((size + size / 2)) two.jfr >cut2.jfr
"$FXPROF" convert cut2.jfr -o cut2.json.gz 2>cut2.err || it_fail "convert cut2.jfr: $(cat cut2.err)"
grep -q "read 1 complete chunks; the last $((size / 2)) bytes are an incomplete chunk" cut2.err ||
    it_fail "cut2.jfr: no word of the incomplete chunk: $(cat cut2.err)"
python3 "$IT_DIR/jfr_check.py" --label "$name.cut2" --counts-only cut2.json.gz rec.summary ||
    it_fail "cut2.jfr: the first chunk's counts differ from jfr summary's of rec.jfr (above)"

# Bad input: one line, exit 1.
one_line_fail() { # FILE WORDS
    local rc=0
    "$FXPROF" convert "$1" -o "$1.json.gz" 2>"$1.err" || rc=$?
    [[ $rc -eq 1 ]] || it_fail "$1: exit $rc, expected 1: $(cat "$1.err")"
    [[ $(wc -l <"$1.err") -eq 1 ]] || it_fail "$1: not one line: $(cat "$1.err")"
    grep -q "$2" "$1.err" || it_fail "$1: no '$2' in: $(cat "$1.err")"
    [[ ! -e "$1.json.gz" ]] || it_fail "$1: a profile was written"
    echo "$name: $1: $(cat "$1.err")"
}
head -c $((size / 2)) rec.jfr >cut1.jfr
one_line_fail cut1.jfr "no complete chunk"
echo "not a recording" >text.jfr
one_line_fail text.jfr "not a JFR recording"

python3 - rec.jfr <<'EOF' || it_fail "the corrupted copies (above)"
import random, subprocess, sys, os
data = open(sys.argv[1], "rb").read()
rnd = random.Random(35)
bad = 0
outcomes = {}
for i in range(200):
    b = bytearray(data)
    for _ in range(rnd.choice([1, 4, 32])):
        b[rnd.randrange(len(b))] = rnd.randrange(256)
    open("mut.jfr", "wb").write(b)
    try:
        p = subprocess.run([os.environ["FXPROF"], "convert", "mut.jfr", "-o", "mut.json.gz"],
                           capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        print(f"copy {i}: hung"); bad += 1; continue
    lines = p.stderr.strip().splitlines()
    ok = (p.returncode == 0) or (p.returncode == 1 and len(lines) == 1)
    outcomes[p.returncode] = outcomes.get(p.returncode, 0) + 1
    if not ok:
        print(f"copy {i}: exit {p.returncode}: {p.stderr!r}"); bad += 1
print(f"corrupted copies: exit codes {outcomes}, {bad} bad")
sys.exit(1 if bad else 0)
EOF

# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"
if pcli_available; then
    pcli_setup
    pcli_load rec.json.gz || it_fail "profiler-cli could not load rec.json.gz"
    pcli_thread_handle waiter-pipe-read >/dev/null || it_fail "profiler-cli: no waiter-pipe-read"
    # the demo's markers of every schema and its counters; async-profiler's native frames
    for f in alloc.json.gz "${pcli_more[@]}"; do
        pcli_load "$f" || it_fail "profiler-cli could not load $f"
    done
    echo "$name: profiler-cli loaded rec.json.gz alloc.json.gz ${pcli_more[*]}"
else
    echo "$name: profiler-cli not installed: its load is not checked"
fi
echo "$name: PASS"
