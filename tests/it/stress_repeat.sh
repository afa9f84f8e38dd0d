#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every fault and stress scenario N times on every JDK of the build's CTest list, one test
# at a time, and prints per scenario x JDK: runs, failures, crashes (hs_err_pid*.log files left
# in the test's run dir). The run dirs of failed runs are kept under BUILD/stress-repeat/.
# usage: tests/it/stress_repeat.sh N [BUILD_DIR]     (BUILD_DIR default: ./build)
set -uo pipefail
n=${1:?usage: stress_repeat.sh N [BUILD_DIR]}
build=$(realpath "${2:-build}")
keep=$build/stress-repeat
mkdir -p "$keep"
mapfile -t tests < <(ctest --test-dir "$build" -N -L 'faults|stress' | sed -n 's/^ *Test *#[0-9]*: //p')
[[ ${#tests[@]} -gt 0 ]] || { echo "no faults/stress tests in $build" >&2; exit 1; }
declare -A fails=() crashes=()
for ((i = 1; i <= n; i++)); do
    for t in "${tests[@]}"; do
        rundir=$build/tests/it/run/$t
        ok=1
        ctest --test-dir "$build" -R "^${t//./\\.}\$" >"$keep/last.log" 2>&1 || ok=0
        c=$(find "$rundir" -name 'hs_err_pid*.log' 2>/dev/null | wc -l)
        crashes[$t]=$((${crashes[$t]:-0} + c))
        if [[ $ok -eq 0 ]]; then
            fails[$t]=$((${fails[$t]:-0} + 1))
            cp -r "$rundir" "$keep/$t.run$i" 2>/dev/null
            cp "$build/Testing/Temporary/LastTest.log" "$keep/$t.run$i.log" 2>/dev/null
        fi
        echo "run $i/$n $t: $([[ $ok -eq 1 ]] && echo passed || echo FAILED), hs_err files: $c"
    done
done
echo
printf '| %-32s | %4s | %8s | %7s |\n' test runs failures crashes
echo '| --- | ---: | ---: | ---: |'
total_f=0 total_c=0
for t in "${tests[@]}"; do
    printf '| %-32s | %4d | %8d | %7d |\n' "$t" "$n" "${fails[$t]:-0}" "${crashes[$t]:-0}"
    total_f=$((total_f + ${fails[$t]:-0}))
    total_c=$((total_c + ${crashes[$t]:-0}))
done
echo "total: $((n * ${#tests[@]})) runs, $total_f failures, $total_c crashes"
[[ $total_f -eq 0 && $total_c -eq 0 ]]
