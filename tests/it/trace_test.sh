#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxagent.TraceContext (issue 33 item 4) on one JDK, TraceWorkload's known answer (spans of known
# CPU work on two threads, a third thread with none; trace_check.py):
#   noagent  without the agent every call is a no-op (set/clear false, label 0) and every misuse
#            still throws IllegalArgumentException: "misuse ok", "enabled false", exit 0;
#   agent    interval=5ms, file= and push= to an OTLP receiver (push_receiver.py); on JDK 21+ a
#            virtual thread's set returns false (its carrier changes under it); the profile
#            passes fxcheck; its span markers, `go tool pprof -raw` of `fxprof convert --to
#            pprof` and `protoc --decode` of `fxprof convert --to otlp` carry the same spans with
#            the same sample counts, each span 150 ms of CPU within 30 % (trace_check.py); the
#            pushed request is byte for byte that conversion, and its OTLP matches the file
#            field by field (otlp_check.py).
# usage: trace_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.trace.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_MARKERS_JAR
command -v protoc >/dev/null || it_fail "protoc (protobuf-compiler, scripts/deps.sh test) is not installed"
GO=$(command -v go || ls /usr/lib/go-*/bin/go 2>/dev/null | head -n 1 || true)
[[ -n $GO ]] || it_fail "go (golang-go, scripts/deps.sh test) is not installed"
RUN=$FXAGENT_RUN_DIR
PROTO=$IT_DIR/../cli/otlp
RX_PID=
trap '[[ -n $RX_PID ]] && kill "$RX_PID" 2>/dev/null || true' EXIT
workload=(-cp "$FXAGENT_MARKERS_JAR" fxagent.test.TraceWorkload)

it_run noagent "$IT_JDK/bin/java" "${workload[@]}" 20
[[ $IT_RC -eq 0 ]] || it_fail "noagent: java exited $IT_RC"
grep -qx 'misuse ok' noagent.out && grep -qx 'enabled false' noagent.out ||
    it_fail "noagent: the API is not a no-op without the agent"

mkdir -p "$RUN/rx"
python3 "$IT_DIR/push_receiver.py" "$RUN/rx" "$RUN/rx/port" &
RX_PID=$!
for _ in $(seq 1 100); do
    [[ -s $RUN/rx/port ]] && break
    sleep 0.1
done
[[ -s $RUN/rx/port ]] || it_fail "the receiver did not start"
profile=$RUN/trace.json.gz
it_run agent "$IT_JDK/bin/java" \
    "-agentpath:$FXAGENT_LIB=interval=5ms,quiet,file=$profile,push=http://127.0.0.1:$(cat "$RUN/rx/port")/v1development/profiles" \
    "${workload[@]}" 150
[[ $IT_RC -eq 0 ]] || it_fail "agent: java exited $IT_RC"
grep -qx 'misuse ok' agent.out && grep -qx 'enabled true' agent.out ||
    it_fail "agent: misuse or enabled not as expected"
want_vt='virtual thread set refused'
[[ $IT_MAJOR -lt 21 ]] && want_vt='virtual thread n/a'
grep -qx "$want_vt" agent.out || it_fail "agent: expected '$want_vt' (a virtual thread's set is refused)"
it_no_hs_err
kill "$RX_PID" 2>/dev/null || true
wait "$RX_PID" 2>/dev/null || true
RX_PID=
"$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"

"$IT_FXPROF" convert "$profile" --to pprof -o trace.pb.gz || it_fail "fxprof convert --to pprof failed"
"$IT_FXPROF" convert "$profile" --to otlp -o trace.otlp.pb || it_fail "fxprof convert --to otlp failed"
HOME=$RUN GOCACHE=$RUN/gocache "$GO" tool pprof -raw trace.pb.gz >trace.raw.txt ||
    it_fail "go tool pprof -raw could not read the pprof"
decode() { # FILE OUT
    protoc -I "$PROTO" \
        --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
        opentelemetry/proto/collector/profiles/v1development/profiles_service.proto <"$1" >"$2" ||
        it_fail "protoc could not decode $1"
}
decode trace.otlp.pb trace.otlp.txt
python3 "$IT_DIR/trace_check.py" "$profile" trace.raw.txt trace.otlp.txt 150 || it_fail "trace_check"
python3 "$IT_DIR/../cli/otlp_check.py" "$profile" trace.otlp.txt >otlp_check.out ||
    it_fail "the OTLP does not match the profile"

mapfile -t bodies < <(ls "$RUN"/rx/req-*.body 2>/dev/null)
[[ ${#bodies[@]} -eq 1 ]] || it_fail "${#bodies[@]} pushed requests, expected 1 (at exit)"
# OTLP bodies go gzipped (Content-Encoding: gzip, docs/FLEET.md): the bytes inside are compared
gzip -dc <"${bodies[0]}" >pushed.otlp.pb || it_fail "the pushed request is not gzip"
cmp -s pushed.otlp.pb trace.otlp.pb || it_fail "the pushed request is not fxprof convert --to otlp's bytes"
echo "$IT_NAME: the pushed request is the conversion's $(stat -c %s trace.otlp.pb) bytes"
