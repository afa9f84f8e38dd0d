#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every unit test binary given under valgrind memcheck, in one process (CK_FORK=no) so
# valgrind sees the tests themselves and not only Check's parent. Fails on any memcheck error
# or definite leak. Exit 77 (skip) without valgrind or in a sanitizer build, except under
# CI=true, where a missing valgrind fails.
#   valgrind_unit.sh SANITIZE BINARY...
set -uo pipefail
san=$1
shift
if [ -n "$san" ]; then
    echo "valgrind: SKIP: this build uses -fsanitize=$san, which valgrind cannot run"
    exit 77
fi
if ! command -v valgrind >/dev/null; then
    [ "${CI:-}" = true ] && { echo "valgrind: FAIL: valgrind not installed (CI=true)"; exit 1; }
    echo "valgrind: SKIP: valgrind not installed"
    exit 77
fi
echo "valgrind: $(valgrind --version)"
logs=$(mktemp -d) || exit 1
trap 'rm -rf "$logs"' EXIT
failed=()
for bin in "$@"; do
    name=${bin##*/}
    t0=$SECONDS
    # FXAGENT_UNIT_LIGHT=1: the exhaustive loops (every byte damaged, 200,000 numbers) take a
    # tenth of their inputs (tests/unit/unit_light.h); natively, as unit.X, they take them all.
    # --fair-sched=yes: test_ring's drains spin (sched_yield) while a SIGPROF producer waits to
    # run; valgrind's default lock lets the spinner starve it: 7 min instead of 9 s in a CI run
    # beside other tests (16 s with it here).
    CK_FORK=no CK_TIMEOUT_MULTIPLIER=10 FXAGENT_UNIT_LIGHT=1 valgrind -q --fair-sched=yes --leak-check=full \
        --errors-for-leak-kinds=definite --error-exitcode=1 "$bin" >"$logs/$name.log" 2>&1
    rc=$?
    echo "valgrind: $name: exit $rc in $((SECONDS - t0)) s"
    if [ "$rc" -ne 0 ]; then
        tail -n 60 "$logs/$name.log"
        failed+=("$name")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "valgrind: FAIL: ${failed[*]}"
    exit 1
fi
echo "valgrind: ${#} binaries clean"
