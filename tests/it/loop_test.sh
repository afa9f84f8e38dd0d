#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Periodic profiles:
#  1. attach with start,loop=2s,file=loop.json.gz to a JVM started without the agent, stop after
#     6 s of sleep: 2 .. (the time between the commands / 2 s + 1) period files loop-1 .. loop-N (the name gets -%n), then the stop's file,
#     numbered in sequence; each valid, the period files with the hot method, one loaded by
#     profiler-cli; the periods do not overlap in time (loop_check.py): each file holds its
#     own period only.
#  2. -agentpath with loop=1s,file=lp-%n.json.gz and the JVM exiting after ~3.5 s of serving:
#     a file per "loop: wrote" line (at least 2) and the last one written at exit, all valid,
#     not overlapping.
# usage: loop_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.loop.jdk$(fx_jdk_major "$1")" "$1"
source "$IT_DIR/profiler_cli.sh"
source "$IT_DIR/attach_lib.sh"
run=$FXAGENT_RUN_DIR

# check_series PREFIX COUNT [pcli index]: files PREFIX-1 .. PREFIX-COUNT valid, in sequence.
# The last one (stop, exit) holds what came after the last period: possibly nothing when the
# end fell right after a period's file, so it is only checked by fxcheck and for order.
check_series() {
    local prefix=$1 count=$2 i how ordered=() out
    for ((i = 1; i < count; i++)); do
        how=
        [[ $i == "${3:-0}" ]] && how=pcli
        echo "$IT_NAME: $prefix-$i: $(check_profile "$prefix-$i.json.gz" $how) samples"
        ordered+=("$prefix-$i.json.gz")
    done
    out=$("$FXCHECK" "$prefix-$count.json.gz") || it_fail "fxcheck rejected $prefix-$count.json.gz: $out"
    echo "$out"
    ordered+=("$prefix-$count.json.gz")
    python3 "$IT_DIR/loop_check.py" "${ordered[@]}" || it_fail "the period files overlap"
}

srv_start srv
# The recording lasts from inside the start's jcmd to inside the stop's: at least the 6 s slept,
# at most the time from before the first jcmd to after the second (jcmd's start-up is ~1 s on a
# quiet machine, 6 s seen on a loaded CI one). loop=2s makes a period file every 2 s of that.
before_start=$(date +%s%N)
expect_ok "start,loop=2s,interval=10ms,file=$run/loop.json.gz" "a profile every 2s"
sleep 6
expect_ok stop "stopped"
span_ms=$((($(date +%s%N) - before_start) / 1000000))
echo "$IT_NAME: stopped $span_ms ms after the start command was sent"
last=$(reply_path)
[[ $last =~ /loop-([0-9]+)\.json\.gz$ ]] || it_fail "the stop's file is '$last'"
periods=$((BASH_REMATCH[1] - 1))
most=$((span_ms / 2000 + 1))
((periods >= 2 && periods <= most)) ||
    it_fail "$periods period files in 6-$span_ms ms with loop=2s (want 2..$most)"
files=("$run"/loop-*.json.gz)
((${#files[@]} == periods + 1)) || it_fail "unexpected files: ${files[*]}"
check_series "$run/loop" $((periods + 1)) 2
srv_finish

srv_start srv2 "-agentpath:$FXAGENT_LIB=loop=1s,interval=10ms,file=$run/lp-%n.json.gz"
sleep 3.5
srv_finish
files=("$run"/lp-*.json.gz)
n=${#files[@]}
written=$(grep -c '^fxagent: loop: wrote' "$SRV_LOG.err" || true)
((written >= 2 && n == written + 1)) || it_fail "$n files, $written period lines: ${files[*]}"
check_series "$run/lp" "$n"
grep -q "^fxagent: wrote .* to $run/lp-$n.json.gz" "$SRV_LOG.err" ||
    it_fail "the last file was not written at exit"
echo "$IT_NAME: OK"
