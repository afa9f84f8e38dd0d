#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A remounted virtual thread's frozen callers marked (issue 22, docs/VALIDATION.md 4.1), on one
# JDK >= 21 (skipped, exit 77, with one line on older JDKs). VThreadWorkload frozen on 4
# carriers: frozen-N sleep 1 ms at the bottom of a 400-deep recursion and burn in frozenBurn
# after each remount (AsyncGetCallTrace jumps from the thawed top to enterSpecial), steady-N
# burn in steadyBurn as deep without ever unmounting. Three runs: cpu, wall, cpu with
# vtracks=0 (every virtual thread under its "[virtual thread] NAME*" root on a carrier).
# Each: >= 80 % of frozenBurn's samples carry "[virtual thread: callers still frozen, not walked
# by AGCT]" at the root of the virtual thread's stack, directly under frozenDescend; none of
# steadyBurn's; meta.extra "Virtual threads" counts exactly the samples with it; profiler-cli
# loads the profile and shows the frame (vthreads_check.py frozen). Fails on a build without
# the frame (no sample carries it, no such meta.extra row).
# usage: vthreads_frozen_test.sh JDK_HOME   (env: FXAGENT_VTHREADS_JAR and it_lib's)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
# shellcheck source=tests/it/vthreads_lib.sh
source "$(dirname "$0")/vthreads_lib.sh"
vt_init it.vthreads_frozen "$1"
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"
pcli_available || { echo "SKIP: profiler-cli is not installed"; exit 77; }

names=(cpu wall capped)
opts=("mode=cpu,interval=10ms" "mode=wall,interval=10ms" "mode=cpu,interval=10ms,vtracks=0")
for i in "${!names[@]}"; do
    vt_java "${names[$i]}" 4 "quiet,file=$FXAGENT_RUN_DIR/${names[$i]}.json.gz,${opts[$i]}" frozen 3
    grep -Eq '^remounts frozen-1 [1-9]' "${names[$i]}.out" ||
        it_fail "${names[$i]}: the frozen virtual threads were not remounted"
done

pcli_setup
for name in "${names[@]}"; do
    pcli_load "$FXAGENT_RUN_DIR/$name.json.gz" || it_fail "profiler-cli could not load $name.json.gz"
    python3 "$IT_DIR/vthreads_check.py" dump_frozen "$name" || it_fail "profiler-cli could not read $name"
    profiler-cli stop --all >/dev/null 2>&1 || true
    unset PCLI_SESSION
done
python3 "$IT_DIR/vthreads_check.py" frozen --label "$IT_NAME" "$FXAGENT_RUN_DIR" "${names[@]}" ||
    it_fail "remounted virtual threads' frozen callers not marked as expected (see above)"
echo "$IT_NAME: OK"
