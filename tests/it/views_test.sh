#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Known answers through every output (issue 30), on one JDK: LockWorkload views 3 under
# -agentpath with interval=1ms,lock=1ms,lockowner=off,alloc=64k (cpu mode; lockowner=off: each
# monitor owner lookup is a safepoint operation of 40-90 ms on a loaded machine, CPU no Java
# thread's sample holds, up to a fifth of this short run's) — two spinning threads, 3 x 300 ms
# monitor waits and 3 x 300 ms ReentrantLock waits, 32 MiB allocated in allocate() — then the
# Firefox profile, fxprof summary (text and --json), convert --to collapsed --view cpu|lock|
# idlewait|alloc|live and --to pprof read back by go tool pprof -raw and -top give the same figures per
# view, and the known ones within their tolerance (views_check.py says which). fxcheck (through
# it_lib's wrapper) also holds the exit line, Profile Info and summary to one total.
# usage: views_test.sh JDK_HOME   (env: FXAGENT_LOCKS_JAR, FXPROF and it_lib's)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.views.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_LOCKS_JAR
[[ -x ${FXPROF:-} ]] || it_fail "FXPROF is not set (run through ctest)"
RUN=$FXAGENT_RUN_DIR

it_run views "$IT_JDK/bin/java" \
    "-agentpath:$FXAGENT_LIB=interval=1ms,lock=1ms,lockowner=off,alloc=64k,file=$RUN/views.json.gz" \
    -jar "$FXAGENT_LOCKS_JAR" views 3
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
grep -q '^process cpu ns ' views.out || it_fail "the workload did not finish"
"$FXCHECK" "$RUN/views.json.gz" || it_fail "fxcheck rejected views.json.gz"

"$FXPROF" summary views.json.gz >summary.txt || it_fail "fxprof summary failed"
"$FXPROF" summary --json views.json.gz >summary.json || it_fail "fxprof summary --json failed"
"$FXPROF" summary --json --view lock views.json.gz >summary-lock.json || it_fail "summary --view lock"
for v in cpu lock idlewait alloc live; do
    "$FXPROF" convert views.json.gz --to collapsed --view "$v" -o "views-$v.collapsed" ||
        it_fail "convert --view $v failed"
done
"$FXPROF" convert views.json.gz --to pprof -o views.pb.gz || it_fail "convert --to pprof failed"
GO=$(command -v go || ls /usr/lib/go-*/bin/go 2>/dev/null | head -n 1 || true)
[[ -n $GO ]] || it_fail "go (golang-go) is not installed: scripts/deps.sh test installs it"
export HOME=$RUN GOCACHE=$RUN/gocache GOFLAGS=-mod=mod
"$GO" tool pprof -raw views.pb.gz >pprof-raw.txt 2>pprof-raw.err || it_fail "go tool pprof -raw: $(cat pprof-raw.err)"
"$GO" tool pprof -top views.pb.gz >pprof-top.txt 2>&1 || it_fail "go tool pprof -top failed"
"$GO" tool pprof -top -sample_index=delay views.pb.gz >pprof-delay.txt 2>&1 ||
    it_fail "go tool pprof -sample_index=delay failed"
python3 "$IT_DIR/views_check.py" "$RUN" || it_fail "the outputs disagree (views_check.py)"
it_no_hs_err
echo "$IT_NAME: OK"
