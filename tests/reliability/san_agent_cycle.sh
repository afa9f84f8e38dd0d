#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sanitizer job's start/stop cycle test (issue 23, docs/RELIABILITY.md): builds libfxagent.so
# with AddressSanitizer in BUILD_DIR (-DFXAGENT_SANITIZE=address -DFXAGENT_SANITIZE_AGENT=ON,
# this build's compiler) and runs tests/it/cycle_test.sh with it, CYCLES cycles on each JDK.
# The JVM preloads the compiler's libasan (an ASan library loaded by attach needs its runtime
# first in the process) with options that leave the JVM its own behaviour: SIGSEGV, SIGBUS and
# SIGFPE stay the JVM's (implicit null checks, safepoint polls), no leak check at exit (the JVM
# does not free what it keeps until exit). Any ASan report stops the JVM (halt_on_error) and is
# written to BUILD_DIR/asan.*: either fails the test. fxprof, fxcheck and the workload are this
# build's. Without the runtime preloaded the agent cannot load at all (ASan refuses to start
# after other libraries), so a passing run had it. The RSS and malloc bounds are off (ASan's shadow
# memory and quarantine are not the agent's growth), and so are the waits that steady their
# readings (FXAGENT_CYCLE_MEM_WAIT=0); the agent's own heap checks stay.
#   san_agent_cycle.sh ROOT BUILD_DIR CC FXPROF FXCHECK SERVER_JAR JDK_HOMES(colon-separated) [CYCLES]
set -uo pipefail
root=$1 dir=$2 cc=$3 fxprof=$4 fxcheck=$5 jar=$6 jdks=$7 cycles=${8:-6}
start=$SECONDS

libasan=$("$cc" -print-file-name=libasan.so)
[[ -f $libasan ]] || { echo "san: FAIL: $cc has no libasan.so ($libasan)"; exit 1; }
echo "san: asan agent: configuring $dir with $cc"
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" \
    -DFXAGENT_SANITIZE=address -DFXAGENT_SANITIZE_AGENT=ON -DFXAGENT_TESTS=OFF \
    -DFXAGENT_FUZZ=OFF >"$dir.configure.log" 2>&1 ||
    { tail -n 30 "$dir.configure.log"; echo "san: FAIL: configure (log: $dir.configure.log)"; exit 1; }
cmake --build "$dir" -j2 --target fxagent >"$dir.build.log" 2>&1 ||
    { tail -n 40 "$dir.build.log"; echo "san: FAIL: build (log: $dir.build.log)"; exit 1; }
lib=$dir/agent/libfxagent.so
ldd "$lib" | grep libasan >/dev/null || { echo "san: FAIL: $lib is not linked with libasan"; exit 1; }
echo "san: asan agent built in $((SECONDS - start)) s: $lib"

rm -f "$dir"/asan.*
export ASAN_OPTIONS="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allow_user_segv_handler=1:detect_leaks=0:halt_on_error=1:quarantine_size_mb=64:log_path='$dir/asan'"
rc=0
IFS=: read -ra homes <<<"$jdks"
# The JDKs' cycles at once, each its own JVM and run folder (the test holds both cores, PROCESSORS
# 2): most of a cycle test is waiting (phase warm-ups, the sleeps that let samples come, fxprof's
# attaches), so one after the other left a core idle; each one's output is printed after it ends.
pids=() logs=()
for jdk in "${homes[@]}"; do
    [[ -x $jdk/bin/java ]] || continue
    major=$(basename "$jdk")
    FXAGENT_JVM_PRELOAD=$libasan FXAGENT_LIB=$lib FXCHECK=$fxcheck FXAGENT_SERVER_JAR=$jar \
        FXPROF=$fxprof FXAGENT_RUN_DIR=$dir/run-$major FXAGENT_CYCLES=$cycles \
        FXAGENT_CYCLE_STOP_S=1 FXAGENT_CYCLE_RSS_KIB=4194304 FXAGENT_CYCLE_FIRST_KIB=4194304 \
        FXAGENT_CYCLE_MALLOC_KIB=4194304 FXAGENT_CYCLE_MEM_WAIT=0 \
        bash "$root/tests/it/cycle_test.sh" "$jdk" >"$dir/run-$major.log" 2>&1 &
    pids+=("$!") logs+=("$dir/run-$major.log")
done
for i in "${!pids[@]}"; do
    wait "${pids[i]}" || rc=1
    cat "${logs[i]}"
done
if compgen -G "$dir/asan.*" >/dev/null; then
    for f in "$dir"/asan.*; do
        echo "--- $f"
        head -n 60 "$f"
    done
    echo "san: FAIL: AddressSanitizer reports (above)"
    rc=1
fi
echo "san: asan cycle test: $((SECONDS - start)) s, exit $rc"
exit "$rc"
