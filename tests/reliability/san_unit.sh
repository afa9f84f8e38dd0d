#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A sanitizer job (docs/RELIABILITY.md): configures ROOT in BUILD_DIR with
# -DFXAGENT_SANITIZE=SANITIZERS, builds only the unit test binaries of MODULES (all of
# tests/unit/test_*.c when none is given) and runs them there with ctest. Any sanitizer report
# fails the test that made it (-fno-sanitize-recover=all, halt_on_error).
# COMPILERS is a colon-separated list in order of preference; the first that links a program
# with these sanitizers is used (clang needs compiler-rt, Debian's libclang-rt-<major>-dev).
#   san_unit.sh ROOT BUILD_DIR SANITIZERS JDK COMPILERS [MODULE...]
set -uo pipefail
root=$1 dir=$2 san=$3 jdk=$4 compilers=$5
shift 5
start=$SECONDS

links_with_sanitizers() {
    local tmp ok=1
    tmp=$(mktemp -d) || return 1
    printf 'int main(void) { return 0; }\n' >"$tmp/t.c"
    "$1" -fsanitize="$san" "$tmp/t.c" -o "$tmp/t" 2>/dev/null && "$tmp/t" && ok=0
    rm -rf "$tmp"
    return $ok
}

cc=
IFS=: read -ra candidates <<<"$compilers"
for c in "${candidates[@]}"; do
    if [ -n "$c" ] && links_with_sanitizers "$c"; then
        cc=$c
        break
    fi
    echo "san: $san: $c cannot link -fsanitize=$san, trying the next compiler"
done
[ -n "$cc" ] || { echo "san: FAIL: no compiler links -fsanitize=$san ($compilers)"; exit 1; }
# CMake cannot switch the compiler of a configured build dir.
if [ -f "$dir/CMakeCache.txt" ] && ! grep -q "^CMAKE_C_COMPILER:[A-Z]*=$cc\$" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
fi

modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
    for f in "$root"/tests/unit/test_*.c; do
        m=${f##*/test_}
        modules+=("${m%.c}")
    done
fi
targets=("${modules[@]/#/test_}")
regex="^unit\\.($(
    IFS='|'
    echo "${modules[*]}"
))\$"

echo "san: $san: configuring $dir with $cc"
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" \
    -DFXAGENT_SANITIZE="$san" -DFXAGENT_JDK="$jdk" -DFXAGENT_FUZZ=OFF >"$dir.configure.log" 2>&1 ||
    { tail -n 30 "$dir.configure.log"; echo "san: FAIL: configure (log: $dir.configure.log)"; exit 1; }
echo "san: $san: building ${targets[*]}"
cmake --build "$dir" -j2 --target "${targets[@]}" >"$dir.build.log" 2>&1 ||
    { tail -n 40 "$dir.build.log"; echo "san: FAIL: build (log: $dir.build.log)"; exit 1; }
built=$SECONDS

# Leaks count as errors; a TSan report stops the test at once, with the report in the log.
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# Sanitized code runs 2-10x slower: Check's per-test timeouts (4 s by default) scale with it.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-10}
# One process per binary (CK_FORK=no, as valgrind_unit.sh runs them): forked, every check's
# child ran LeakSanitizer's exit scan (unit.options: 26.6 CPU-s against 0.2; the 52 binaries
# 169 CPU-s against 111, load 9-20). The same code runs under the same sanitizers, and
# a leak still fails the binary, reported at its exit (docs/RELIABILITY.md). A binary that sets
# CK_FORK itself (srunner_set_fork_status) keeps forking.
export CK_FORK=${CK_FORK:-no}
ctest --test-dir "$dir" -R "$regex" --output-on-failure --timeout 600 -j2
rc=$?
echo "san: $san: built in $((built - start)) s, tests ran in $((SECONDS - built)) s, ctest exit $rc"
[ "$rc" -eq 0 ] || echo "san: FAIL: $san: a unit test failed or a sanitizer reported (output above)"
exit "$rc"
