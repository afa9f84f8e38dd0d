#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Allocation and live-heap profiling (issue 17), java-test/alloc's AllocWorkload under alloc=512k:
#   split   the estimated bytes of three sites split as the workload measured them (+-6 pp) and
#           sum to the bytes the thread allocated (+-15 %) (alloc_check.py split); profiler-cli's
#           native-allocations summary counts the same bytes;
#   live    heldSite's arrays stay reachable, droppedSite's die in two System.gc() at the end
#           (issue 30's known live set). The JVM asks for a dump itself right after them, while
#           its Service Thread, which posts the ObjectFree events of a GC, is held still
#           (hold_thread.py): the dump must collect the frees HotSpot has not posted yet
#           (allocs.c, collect_frees). In the dump and in the exit's file heldSite holds
#           >= 80 % of the retained bytes, and fxprof summary --json gives the file's allocated
#           and retained bytes (alloc_check.py share); in the exit's file the retained bytes are
#           heldSite's (alloc_check.py live), and profiler-cli's native-retained-allocations
#           tree names heldSite and not droppedSite, and so do fxprof summary's top retaining
#           methods; the exit's file as OTLP (convert --to otlp) decodes with protoc and
#           matches the file field by field (tests/cli/otlp_check.py);
#   attach  fxprof start (no option) into a JVM started without the agent and stop, then
#           start --options alloc=512k (issue 30: a start after a stop takes alloc=), a dump, a
#           stop, a second start and stop: the files hold balanced tables, and both recordings'
#           meta.extra counts are their own (issue 23: the second's not the first's plus its
#           own, alloc_check.py own); then -agentpath with loop=1s: every file of
#           the series is balanced (a free whose allocation an earlier file took is left out).
# usage: alloc_test.sh JDK_HOME split|live|attach
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
mode=$2
name="it.alloc.jdk$(fx_jdk_major "$1").$mode"
it_init "$name" "$1" FXAGENT_ALLOC_JAR
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"
check=(python3 "$IT_DIR/alloc_check.py")

run_alloc() { # LOG OPTIONS ARGS...
    local log=$1 opts=$2
    shift 2
    it_run "$log" "$IT_JDK/bin/java" "-agentpath:$FXAGENT_LIB=$opts" -cp "$FXAGENT_ALLOC_JAR" \
        fxagent.alloc.AllocWorkload "$@"
    [[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
    it_no_hs_err
}

# The main thread's top-down tree under a summary strategy, as JSON in OUT.
pcli_tree() { # PROFILE STRATEGY OUT
    pcli_load "$1" || it_fail "profiler-cli could not load $1"
    local h
    h=$(pcli_thread_handle main) || it_fail "no thread main in $1"
    pcli_json "$3" thread samples-top-down --thread "$h" --strategy "$2" --max-lines 1000 ||
        it_fail "profiler-cli samples-top-down --strategy $2 failed"
}

case $mode in
split)
    run_alloc split alloc=512k,file="$FXAGENT_RUN_DIR/split.json.gz" split 4 truth.txt
    "$FXCHECK" split.json.gz || it_fail "fxcheck rejected split.json.gz"
    "${check[@]}" split split.json.gz --truth truth.txt || it_fail "the byte split is off"
    pcli_setup
    pcli_tree split.json.gz native-allocations tree.json
    python3 - split.json.gz tree.json <<'PY' || it_fail "profiler-cli's bytes differ"
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
main = [t for t in d["threads"] if t["name"] == "main"][0]
want = sum(w for w in main["nativeAllocations"]["weight"] if w > 0)
tree = json.load(open(sys.argv[2]))
got = tree["regularCallTree"]["totalSamples"]
print(f"profiler-cli native-allocations: {got} bytes, the table {want}")
sys.exit(0 if tree.get("weightType") == "bytes" and abs(got - want) <= 1 else 1)
PY
    ;;
live)
    # Between its allocations and its collections the workload makes dump.json.gz.ready and
    # waits for dump.json.gz.go; hold_thread.py holds the JVM's Service Thread still from then
    # until the dump is written, so only the agent's dump can have its ObjectFree events posted.
    it_run live python3 "$IT_DIR/hold_thread.py" --thread "Service Thread" \
        --ready dump.json.gz.ready --go dump.json.gz.go --until dump.json.gz -- \
        "$IT_JDK/bin/java" "-agentpath:$FXAGENT_LIB=alloc=512k,file=$FXAGENT_RUN_DIR/live.json.gz" \
        -cp "$FXAGENT_ALLOC_JAR" fxagent.alloc.AllocWorkload live 2 "$FXAGENT_LIB" \
        "$FXAGENT_RUN_DIR/dump.json.gz"
    [[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
    it_no_hs_err
    grep -q '^dump: return code: 0' live.out || it_fail "the JVM's own dump request failed"
    for f in dump live; do
        "$FXCHECK" "$f.json.gz" || it_fail "fxcheck rejected $f.json.gz"
        "$FXPROF" summary --json "$f.json.gz" >"$f-summary.json" || it_fail "fxprof summary failed"
        "${check[@]}" share "$f.json.gz" --summary "$f-summary.json" ||
            it_fail "$f.json.gz: the retained bytes are not the known live set's"
    done
    "${check[@]}" live live.json.gz || it_fail "the retained bytes are wrong"
    pcli_setup
    pcli_tree live.json.gz native-retained-allocations retained.json
    grep -q 'AllocWorkload.heldSite' retained.json || it_fail "retained tree lacks heldSite"
    if grep -q 'AllocWorkload.droppedSite' retained.json; then
        it_fail "the retained tree shows droppedSite after System.gc()"
    fi
    pcli_tree live.json.gz native-allocations allocated.json
    grep -q 'AllocWorkload.droppedSite' allocated.json || it_fail "allocations lack droppedSite"
    # fxprof summary: heldSite tops the retaining methods, droppedSite is not among them
    python3 - live-summary.json <<'PY' || it_fail "fxprof summary's allocation lists are wrong"
import json, sys
a = json.load(open(sys.argv[1]))["allocations"]
names = lambda k: [e["name"].rsplit(".", 1)[-1] for e in a[k]]
print("summary: allocating", names("allocating"), "retaining", names("retaining"))
sys.exit(0 if names("retaining")[0] == "heldSite" and "droppedSite" not in names("retaining")
         and "droppedSite" in names("allocating") else 1)
PY
    # OTLP (issue 33): the same file as a request protoc decodes, every field as in the file
    # (cpu, alloc_space and inuse_space profiles, observation by observation), this host's name
    "$FXPROF" convert live.json.gz --to otlp -o live.otlp.pb || it_fail "convert --to otlp failed"
    protoc -I "$IT_DIR/../cli/otlp" \
        --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
        opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
        <live.otlp.pb >live.otlp.txt || it_fail "protoc could not decode live.otlp.pb"
    python3 "$IT_DIR/../cli/otlp_check.py" live.json.gz live.otlp.txt --expect-host "$(hostname)" |
        tee otlp.out || it_fail "the OTLP request does not match live.json.gz"
    grep -q 'inuse_space/bytes.*hottest leaf' otlp.out || it_fail "no live heap profile in OTLP"
    ;;
attach)
    [[ -x "${FXPROF:-}" ]] || it_fail "FXPROF is not set"
    "$IT_JDK/bin/java" -cp "$FXAGENT_ALLOC_JAR" fxagent.alloc.AllocWorkload bench 15 \
        >plain.out 2>plain.err &
    pid=$!
    sleep 2
    it_run start0 "$FXPROF" start "$pid" --agent "$FXAGENT_LIB" -o "$FXAGENT_RUN_DIR/attach-0.json.gz"
    [[ $IT_RC -eq 0 ]] || { kill "$pid"; it_fail "fxprof start (no option) exited $IT_RC"; }
    it_run stop0 "$FXPROF" stop "$pid"
    [[ $IT_RC -eq 0 ]] || { kill "$pid"; it_fail "fxprof stop (no option) exited $IT_RC"; }
    it_run start "$FXPROF" start "$pid" --agent "$FXAGENT_LIB" --options alloc=512k \
        -o "$FXAGENT_RUN_DIR/attach-stop.json.gz"
    [[ $IT_RC -eq 0 ]] || { kill "$pid"; it_fail "fxprof start exited $IT_RC"; }
    sleep 2
    it_run dump "$FXPROF" dump "$pid" -o "$FXAGENT_RUN_DIR/attach-dump.json.gz"
    [[ $IT_RC -eq 0 ]] || { kill "$pid"; it_fail "fxprof dump exited $IT_RC"; }
    sleep 1
    it_run stop "$FXPROF" stop "$pid"
    [[ $IT_RC -eq 0 ]] || { kill "$pid"; it_fail "fxprof stop exited $IT_RC"; }
    # A second recording in the same JVM: its meta.extra counts are its own (issue 23).
    it_run start2 "$FXPROF" start "$pid" --agent "$FXAGENT_LIB" --options alloc=512k \
        -o "$FXAGENT_RUN_DIR/attach-again.json.gz"
    [[ $IT_RC -eq 0 ]] || { kill "$pid"; it_fail "fxprof start (again) exited $IT_RC"; }
    sleep 1
    it_run stop2 "$FXPROF" stop "$pid"
    [[ $IT_RC -eq 0 ]] || { kill "$pid"; it_fail "fxprof stop (again) exited $IT_RC"; }
    wait "$pid" || it_fail "the attached JVM exited with an error: $(cat plain.err)"
    for f in attach-dump.json.gz attach-stop.json.gz attach-again.json.gz; do
        "$FXCHECK" "$f" || it_fail "fxcheck rejected $f"
        "${check[@]}" balanced "$f" || it_fail "$f is not balanced"
    done
    for f in attach-stop.json.gz attach-again.json.gz; do
        "${check[@]}" own "$f" || it_fail "$f counts allocations of another recording"
    done
    run_alloc loop "alloc=512k,loop=1s,file=$FXAGENT_RUN_DIR/loop-%n.json.gz" bench 4
    n=0
    while [[ -f loop-$((n + 1)).json.gz ]]; do n=$((n + 1)); done
    [[ $n -ge 3 ]] || it_fail "only $n files of loop=1s in 4 s"
    for ((i = 1; i <= n; i++)); do
        f=loop-$i.json.gz
        how=balanced
        [[ $i -eq $n ]] && how=balanced_last # the exit's file: what came after the last period
        "$FXCHECK" "$f" || it_fail "fxcheck rejected $f"
        "${check[@]}" "$how" "$f" || it_fail "$f is not balanced"
    done
    ;;
*) it_fail "unknown mode '$mode'" ;;
esac
echo "$name: OK"
