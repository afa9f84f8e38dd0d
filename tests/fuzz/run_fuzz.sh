#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fuzz jobs (docs/RELIABILITY.md).
#   run_fuzz.sh build ROOT BUILD_DIR [CLANG]
#       configures tests/fuzz alone with clang in BUILD_DIR and builds the harnesses.
#   run_fuzz.sh run NAME BINARY CORPUS_DIR[:CORPUS_DIR...] ARTIFACT_DIR
#       fuzzes for FXAGENT_FUZZ_SECONDS (else FXFUZZ_DEFAULT_SECONDS, else 30) seconds, starting
#       from a copy of the CORPUS_DIRs (the repository's seeds are never written), and fails on any
#       crash, leak, sanitizer report, timeout or out-of-memory; the input is kept in
#       ARTIFACT_DIR. Prints the inputs tried, from libFuzzer's "Done N runs in S second(s)".
# Exit 77 (skip) when there is no usable clang, except under CI=true, where that fails.
set -uo pipefail

skip_or_fail() {
    if [ "${CI:-}" = true ]; then
        echo "fuzz: FAIL: $1 (CI=true: a missing fuzz toolchain is an error)"
        exit 1
    fi
    echo "fuzz: SKIP: $1"
    exit 77
}

# Links an empty harness with -fsanitize=fuzzer: clang alone is not enough, the runtime comes
# from compiler-rt (Debian: libclang-rt-<major>-dev, only recommended by clang).
check_clang() {
    local cc=$1 tmp
    command -v "$cc" >/dev/null || skip_or_fail "no clang found (install clang)"
    tmp=$(mktemp -d) || exit 1
    printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
        >"$tmp/t.c"
    if ! "$cc" -fsanitize=fuzzer,address,undefined "$tmp/t.c" -o "$tmp/t" 2>"$tmp/err"; then
        local major
        major=$("$cc" -dumpversion | cut -d. -f1)
        sed 's/^/fuzz:   /' "$tmp/err" | head -5
        rm -rf "$tmp"
        skip_or_fail "$cc cannot link -fsanitize=fuzzer (install libclang-rt-$major-dev)"
    fi
    rm -rf "$tmp"
}

build() {
    local root=$1 dir=$2 cc=${3:-clang} start=$SECONDS
    check_clang "$cc"
    echo "fuzz: building the harnesses with $("$cc" --version | head -1) in $dir"
    cmake -S "$root/tests/fuzz" -B "$dir" -DCMAKE_C_COMPILER="$cc" \
        -DFX_WARNINGS="${FXFUZZ_WARNINGS:-}" >"$dir.configure.log" 2>&1 ||
        { cat "$dir.configure.log"; echo "fuzz: FAIL: configure"; exit 1; }
    cmake --build "$dir" -j2 || { echo "fuzz: FAIL: build"; exit 1; }
    echo "fuzz: built in $((SECONDS - start)) s"
}

# Prints what libFuzzer left in the artifact dir for this run and how to replay it.
report_findings() {
    local name=$1 bin=$2 artifacts=$3 log=$4
    echo "fuzz: --- last lines of $log ---"
    tail -n 60 "$log"
    echo "fuzz: --- end of log ---"
    local f
    for f in "$artifacts/$name"-*; do
        [ -e "$f" ] || continue
        echo "fuzz: finding kept: $f (replay: $bin $f)"
    done
}

run() {
    local name=$1 bin=$2 corpus=$3 artifacts=$4
    local seconds=${FXAGENT_FUZZ_SECONDS:-${FXFUZZ_DEFAULT_SECONDS:-30}}
    [ -x "$bin" ] || skip_or_fail "$bin was not built (see fuzz.build)"
    mkdir -p "$artifacts" || exit 1
    rm -f "$artifacts/$name"-* # findings of an earlier run: this run's verdict stands alone
    local log rc
    # Global, not local: the EXIT trap runs after run() has returned, when a local is gone (and
    # every run used to leave its corpus copy behind in $TMPDIR).
    work=$(mktemp -d) || exit 1
    trap 'rm -rf "$work"' EXIT
    local dirs d
    IFS=: read -ra dirs <<<"$corpus"
    for d in "${dirs[@]}"; do cp -R "$d/." "$work/" || exit 1; done
    corpus=${dirs[0]} # where the dictionary is looked for
    local seeds
    seeds=$(find "$work" -type f | wc -l)
    log="$artifacts/$name.log"
    local dict=()
    [ -f "$corpus/../../$name.dict" ] && dict=(-dict="$corpus/../../$name.dict")
    echo "fuzz: $name for $seconds s from $seeds seeds"
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
        -artifact_prefix="$artifacts/$name-" "${dict[@]}" "$work" >"$log" 2>&1
    rc=$?
    local done_line
    done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1)
    local entries
    entries=$(find "$work" -type f | wc -l)
    if [ "$rc" -ne 0 ] || [ -z "$done_line" ]; then
        report_findings "$name" "$bin" "$artifacts" "$log"
        echo "fuzz: FAIL: $name: libFuzzer exit $rc; ${done_line:-no final stats}"
        exit 1
    fi
    local runs secs
    runs=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1/' <<<"$done_line")
    secs=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\2/' <<<"$done_line")
    echo "fuzz: $name: $runs inputs tried in $secs s ($((runs / (secs > 0 ? secs : 1)))/s)," \
        "corpus $seeds -> $entries entries, no findings"
}

case "${1:-}" in
build)
    shift
    build "$@"
    ;;
run)
    shift
    run "$@"
    ;;
*)
    echo "usage: $0 build ROOT BUILD_DIR [CLANG] | run NAME BINARY CORPUS_DIR ARTIFACT_DIR" >&2
    exit 2
    ;;
esac
