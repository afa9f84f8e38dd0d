#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# style.tests_by_name: a newcomer finds each piece's tests by name (issue 36 item 5).
#  1. every core module core/PART/M.c has the test unit.M, or its first lines say which tests
#     cover it ("Tests: unit.X, it.Y.");
#  2. every agent part P (base, sampling, model, output, validate, control) says in its public
#     header's first lines which tests cover it ("Tests: ...");
#  3. every test those lines name is registered in this build (an it.NAME stands for its
#     it.NAME.jdkNN runs; one that tests/it/*.cmake registers per JDK but for no JDK found
#     here, as it.vthreads on a machine with JDK 17 only, is noted);
#  4. every part's label (agent.P, core.P: tests/test_properties.cmake) selects tests, so that
#     `ctest -L agent.sampling` runs a part's tests.
#   tests_by_name.sh ROOT BUILD
set -uo pipefail
root=$(cd "$1" && pwd) || exit 1
build=$2
mapfile -t names < <(ctest --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: //p')
if [ "${#names[@]}" -lt 10 ]; then
    echo "style: FAIL: ctest --test-dir $build -N lists ${#names[@]} tests"
    exit 1
fi
declare -A have=()
for n in "${names[@]}"; do
    have[$n]=1
    have[${n%.jdk[0-9]*}]=1 # it.views.jdk17 -> it.views
    base=${n%%.jdk[0-9]*}
    have[$base]=1 # it.alloc.jdk17.live -> it.alloc
done
fail=0
say() { echo "style: FAIL: $*"; fail=1; }
# The tests a file's first 20 lines name after "Tests:", one per line.
tests_of() {
    head -n 20 "$1" | sed -n 's/.*Tests: *\([^*]*\).*/\1/p' | tr ',' '\n' |
        sed 's/[. ]*$//; s/^ *//' | grep -v '^$'
}
named=0
check_named() { # FILE: every test FILE names exists; `named`: how many it names
    local f=$1 t
    named=0
    while IFS= read -r t; do
        named=$((named + 1))
        [ -n "${have[$t]:-}" ] && continue
        # an it.NAME registered per JDK only from some version on (it.vthreads: JDK 21+) is
        # absent on a machine whose JDKs are older: its CMake file must still register it
        if [[ $t == it.* ]] && grep -qF "$t.jdk" "$root"/tests/it/*.cmake 2>/dev/null; then
            echo "style: note: $f names $t, registered per JDK but for none found here"
            continue
        fi
        say "$f names test '$t', which this build does not register"
    done < <(tests_of "$f")
}
cd "$root" || exit 1
modules=0
for f in core/*/*.c; do
    m=$(basename "$f" .c)
    modules=$((modules + 1))
    [ -n "${have[unit.$m]:-}" ] && continue
    check_named "$f"
    [ "$named" -gt 0 ] || say "$f has no test unit.$m and its first lines name none (Tests: ...)"
done
declare -A public=([base]=base.h [sampling]=sampling.h [model]=model.h [output]=output.h
                   [validate]=validate.h [control]=control.h)
for p in "${!public[@]}"; do
    h=agent/$p/${public[$p]}
    [ -f "$h" ] || { say "$h is missing"; continue; }
    check_named "$h"
    [ "$named" -gt 0 ] || say "$h does not name the tests of agent/$p/ (Tests: ...)"
done
parts=0
for l in $(printf 'agent.%s\n' "${!public[@]}") $(cd core && printf 'core.%s\n' */ | tr -d /); do
    parts=$((parts + 1))
    n=$(ctest --test-dir "$build" -N -L "^$l\$" | grep -c 'Test *#')
    [ "$n" -gt 0 ] || say "no test has the label $l (ctest -L $l): tests/test_properties.cmake"
done
echo "style: $parts part labels checked (ctest -L agent.P, core.P)"
echo "style: $modules core modules and ${#public[@]} agent parts checked against ${#names[@]} tests"
[ "$fail" -eq 0 ] && echo "style: every core module and agent part names its tests"
exit "$fail"
