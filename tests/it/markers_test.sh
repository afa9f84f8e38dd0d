#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The markers workload under the agent, checked against its truth table (markers_check.py):
# >= GCS "GC pause" markers of plausible duration on the main track, JIT markers (codemap=jvmti) naming
# MarkersWorkload.hot, the user markers on "marker-thread", the five counters with plausible
# values, short-lived threads with registerTime/unregisterTime under their renamed names.
# The JVM must exit 0 without hs_err; fxcheck and profiler-cli must accept the profile.
# usage: markers_test.sh JDK_HOME [GCS]
set -euo pipefail
source "$(dirname "$0")/markers_lib.sh"
gcs=${2:-5}
markers_init "it.markers.jdk$(fx_jdk_major "$1")" "$1"
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"

profile=$FXAGENT_RUN_DIR/profile.json.gz
# -Xmx large enough that the workload's own allocation triggers no GC besides System.gc().
# codemap=jvmti: JIT markers come from CompiledMethodLoad, which the default (codemap=heap, issue
# 31) does not enable on HotSpot
markers_java run "-agentpath:$FXAGENT_LIB=interval=10ms,codemap=jvmti,file=$profile" "$gcs"
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
grep -q '^markers enabled: true$' run.out || it_fail "the workload did not see the agent's markers"
[[ -s $profile ]] || it_fail "no profile at $profile"
"$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"

pcli_setup
pcli_load "$profile" || it_fail "profiler-cli could not load $profile"
pcli_json pcli-threads.json thread list || it_fail "profiler-cli thread list failed"
main=$(python3 -c 'import json,sys
t=[t for t in json.load(open(sys.argv[1]))["threads"] if t["name"]=="main"]
print(t[0]["threadHandle"] if len(t)==1 else "")' pcli-threads.json)
[[ -n $main ]] || it_fail "profiler-cli: not exactly one thread named main"
mt=$(pcli_thread_handle marker-thread) || it_fail "profiler-cli: not exactly one thread named marker-thread"
pcli_json pcli-main-markers.json thread markers --thread "$main" --list --limit 0 ||
    it_fail "profiler-cli thread markers failed for main"
pcli_json pcli-jit-hot.json thread markers --thread "$main" --list --limit 0 \
    --search MarkersWorkload.hot || it_fail "profiler-cli marker search failed"
pcli_json pcli-user-markers.json thread markers --thread "$mt" --list --limit 0 ||
    it_fail "profiler-cli thread markers failed for marker-thread"
pcli_json pcli-counters.json counter list || it_fail "profiler-cli counter list failed"
for c in 0 1 2 3 4; do
    pcli_json "pcli-counter-$c.json" counter info "c-$c" || it_fail "profiler-cli counter info c-$c failed"
done

python3 "$IT_DIR/markers_check.py" --profile "$profile" --run "$FXAGENT_RUN_DIR" --gcs "$gcs" \
    --threads 20 --label "$IT_NAME" || it_fail "the profile does not match the workload (see above)"
echo "$IT_NAME: OK"
