#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Smoke test of issue 16's mixed-mode workloads (java-test/mixed), without the agent: each runs
# for a second on the given JDK and must exit 0 with its one line proving it worked (the JNI
# function was called as often as Java called it, the Deflater round trip verified, the
# one-byte writes happened on their own thread) and nothing on stderr (no native-access
# warning either). The profile assertions come with the issue's integration tests.
# usage: mixed_workloads_test.sh JDK_HOME   (env: FXAGENT_MIXED_JAR, FXAGENT_MIXED_LIB,
#                                            FXAGENT_RUN_DIR, set by ctest)
set -euo pipefail
# shellcheck source=tests/it/jdks.sh
source "$(dirname "$0")/jdks.sh"
jdk=$1
name="it.mixed_workloads.jdk$(fx_jdk_major "$jdk")"
fail() {
    echo "FAIL: $name: $*" >&2
    exit 1
}
for v in FXAGENT_MIXED_JAR FXAGENT_MIXED_LIB FXAGENT_RUN_DIR; do
    [[ -n "${!v:-}" ]] || fail "$v is not set (run through ctest)"
    [[ $v == FXAGENT_RUN_DIR || -f "${!v}" ]] || fail "not built: ${!v}"
done
rm -rf "$FXAGENT_RUN_DIR"
mkdir -p "$FXAGENT_RUN_DIR"
cd "$FXAGENT_RUN_DIR"

# run WORKLOAD: runs it for 1 s; its stdout line goes to WORKLOAD.out.
run() {
    local rc=0
    "$jdk/bin/java" --enable-native-access=ALL-UNNAMED -Dfxagent.mixed.lib="$FXAGENT_MIXED_LIB" \
        -jar "$FXAGENT_MIXED_JAR" "$1" 1 >"$1.out" 2>"$1.err" || rc=$?
    [[ $rc -eq 0 ]] || fail "$1 exited $rc: $(head -c 2000 "$1.err")"
    [[ ! -s $1.err ]] || fail "$1 wrote to stderr: $(head -c 2000 "$1.err")"
    echo "$name: $(cat "$1.out")"
}

run jni
[[ $(cat jni.out) =~ ^jni:\ java_calls=([0-9]+)\ native_calls=([0-9]+) ]] || fail "jni line: $(cat jni.out)"
((BASH_REMATCH[1] > 0)) || fail "Java never called the JNI function"
((BASH_REMATCH[1] == BASH_REMATCH[2])) || fail "Java made ${BASH_REMATCH[1]} calls, C saw ${BASH_REMATCH[2]}"

run deflate
[[ $(cat deflate.out) =~ ^deflate:\ rounds=([0-9]+)\ .*\ verified$ ]] || fail "deflate line: $(cat deflate.out)"

run devnull
[[ $(cat devnull.out) =~ ^devnull:\ writes=([0-9]+)\ thread=devnull-writer$ ]] || fail "devnull line: $(cat devnull.out)"
((BASH_REMATCH[1] > 0)) || fail "no byte was written"

# The burn function must be findable by name in the library the later tests will profile.
if command -v nm >/dev/null; then
    nm -D --defined-only "$FXAGENT_MIXED_LIB" | grep -q ' T fxmixed_burn_cpu$' ||
        fail "fxmixed_burn_cpu is not an exported symbol of $FXAGENT_MIXED_LIB"
fi
echo "$name: OK"
