#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# push= (issue 33) against a stand-in backend on 127.0.0.1 (push_receiver.py), LockWorkload
# `known N` (its thread `busy` hot in a LockWorkload.lambda$known) on one JDK:
#   otlp       loop=1s, push=.../v1development/profiles, service= and labels=; the receiver
#              answers 503 to the first two pushes: they are retried with back-off, every period
#              file (the one at exit too) arrives once, gzipped (Content-Encoding: gzip), each
#              request gunzipped decodes with protoc and
#              matches its file field by field, the labels are resource attributes, and the CPU
#              samples received add up to those taken less the counted drops (push_check.py otlp);
#              the files' meta.extra "Push" counts the failed attempts, and once a period was
#              delivered, what the last push cost (bytes, before gzip, ms to convert and to send,
#              memory held), the push's memory within its share of memory= and that share left by
#              the model's bound;
#   restart    push= to an OTLP receiver with service=first; fxprof stop: that file reaches it (and
#              nothing else does; before it, status says the method ids cached and the push's
#              memory); fxprof start --options push=.../ingest,service=second,labels=
#              (a restart takes push=, service=, labels= like the other options): no loop=, one
#              request at exit to the second receiver, name=second{labels}, from/until of the
#              file, format=pprof, the gzipped pprof in the multipart field "profile", read by
#              `go tool pprof -raw` with the hot method (push_check.py pyroscope);
#   refused    push= to a port nothing listens on: the JVM runs and exits as without it, and says
#              on one stderr line that the period was not delivered;
#   large      memory=1m: the push's share (256 KiB) is less than converting the period at exit
#              would take: not pushed, nothing reaches the receiver, one stderr line says why.
# usage: push_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.push.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_LOCKS_JAR
command -v protoc >/dev/null || it_fail "protoc (protobuf-compiler, scripts/deps.sh test) is not installed"
RUN=$FXAGENT_RUN_DIR
RX_PID=
trap '[[ -n $RX_PID ]] && kill "$RX_PID" 2>/dev/null || true' EXIT

receiver() { # DIR [--refuse N]: starts push_receiver.py, sets PORT
    mkdir -p "$1"
    rm -f "$1/port"
    python3 "$IT_DIR/push_receiver.py" "$@" &
    RX_PID=$!
    local port_file=$1/port
    for _ in $(seq 1 100); do
        [[ -s $port_file ]] && break
        sleep 0.1
    done
    [[ -s $port_file ]] || it_fail "the receiver did not start"
    PORT=$(cat "$port_file")
}
stop_receiver() {
    kill "$RX_PID" 2>/dev/null || true
    wait "$RX_PID" 2>/dev/null || true
    RX_PID=
}

# ---- otlp: loop=1s, the first two pushes refused ----
receiver "$RUN/otlp" "$RUN/otlp/port" --refuse 2
it_run otlp "$IT_JDK/bin/java" \
    "-agentpath:$FXAGENT_LIB=interval=5ms,loop=1s,push=http://127.0.0.1:$PORT/v1development/profiles,service=lockapp,labels=env=test;dc=eu-1,quiet,file=$RUN/otlp/p-%n.json.gz" \
    -jar "$FXAGENT_LOCKS_JAR" known 7
[[ $IT_RC -eq 0 ]] || it_fail "otlp: java exited $IT_RC"
it_no_hs_err
stop_receiver
mapfile -t files < <(ls "$RUN"/otlp/p-*.json.gz | sort -t- -k2 -n)
[[ ${#files[@]} -ge 3 ]] || it_fail "otlp: ${#files[@]} period files, expected at least 3"
python3 "$IT_DIR/push_check.py" otlp "$RUN/otlp" "${files[@]}" --service lockapp \
    --label env=test --label dc=eu-1 --refused 2 --hot 'LockWorkload.lambda$known' ||
    it_fail "otlp: what was pushed is not what was written"
grep -q 'fxagent: push: 1 failed attempts, 0 periods dropped so far (at most 16 wait; oldest first), 0 refused' otlp.err || it_fail "otlp: the first failure is not said on stderr"
[[ $(grep -c 'fxagent: push:' otlp.err) -eq 1 ]] || it_fail "otlp: the failures are said more than once a minute"
python3 - "${files[@]}" <<'PY' || it_fail "otlp: the files' meta.extra 'Push' is wrong"
import gzip, json, re, sys
costs = 0
for f in sys.argv[1:]:
    p = json.load(gzip.open(f, "rt"))
    push = {e["label"]: e["value"] for g in p["meta"]["extra"] if g["label"] == "Push" for e in g["entries"]}
    print("otlp:", f.rsplit("/", 1)[-1], push)
    if push["periods delivered"] > 0:
        # a delivered push says what it cost (docs/FLEET.md "Cost and scale")
        m = re.fullmatch(r"(\d+) bytes \((\d+) before gzip\); [\d.]+ ms to convert, [\d.]+ ms to send; (\d+) KiB held", push["last push delivered"])
        if not m or not 0 < int(m[1]) < int(m[2]):
            sys.exit("no cost of the last push, or its body was not gzipped smaller")
        # push memory within memory= (docs/FLEET.md "Memory"): held while converting, at most
        # the share (a quarter of the default 64m)
        mem = re.fullmatch(r"(\d+) KiB at most of a share of (\d+) KiB", push["memory while converting"])
        if not mem or int(mem[2]) != 16384 or not 0 < int(mem[1]) <= int(mem[2]) or int(m[3]) > int(mem[1]):
            sys.exit("push memory not counted or not within its share")
        if push["periods too large for memory= (not pushed)"] != 0:
            sys.exit("a period was too large")
        costs += 1
    # the model's bound leaves the push its share (docs/PRODUCTION.md, "Memory bound")
    mb = {e["label"]: e["value"] for g in p["meta"]["extra"] if g["label"] == "Memory bound" for e in g["entries"]}
    share = mb.get("push's share of the bound (push=: converting and sending a period)")
    model = float(mb["model's share of the bound now (what the rings leave)"].split()[0])
    if share != "16.00 MiB" or model > 64 - 16:
        sys.exit(f"the push's share of the bound is wrong: {share}, the model's {model} MiB")
# the two refused attempts are counted in the last file; some period saw a delivery before it
sys.exit(0 if push["failed attempts (retried)"] == 2 and costs > 0 else 1)
PY

# ---- restart: OTLP to a first receiver until a stop, then a start with Pyroscope's ingest ----
GO=$(command -v go || ls /usr/lib/go-*/bin/go 2>/dev/null | head -n 1 || true)
[[ -n $GO ]] || it_fail "go (golang-go, scripts/deps.sh test) is not installed"
[[ -x "${FXPROF:-}" ]] || it_fail "FXPROF is not set"
receiver "$RUN/first" "$RUN/first/port"
FIRST_PID=$RX_PID FIRST_PORT=$PORT
receiver "$RUN/pyro" "$RUN/pyro/port"
trap '[[ -n $RX_PID ]] && kill "$RX_PID" 2>/dev/null; kill "$FIRST_PID" 2>/dev/null || true' EXIT
"$IT_JDK/bin/java" \
    "-agentpath:$FXAGENT_LIB=interval=5ms,push=http://127.0.0.1:$FIRST_PORT/v1development/profiles,service=first,quiet,file=$RUN/first.json.gz" \
    -jar "$FXAGENT_LOCKS_JAR" known 5 >pyro.out 2>pyro.err &
jpid=$!
sleep 1.5
# status: the method ids the drain holds for this period (the hot lambda's among them), and the
# push's memory (nothing converted yet: no loop=)
it_run status1 "$FXPROF" status "$jpid" --agent "$FXAGENT_LIB"
cat status1.out status1.err | grep -Eq ' [1-9][0-9]* method ids cached, .*, push 0 KiB now \(at most 0 KiB\)' ||
    { kill "$jpid"; it_fail "restart: status does not say the method ids cached or the push's memory: $(cat status1.out status1.err)"; }
it_run stop1 "$FXPROF" stop "$jpid"
[[ $IT_RC -eq 0 ]] || { kill "$jpid"; it_fail "restart: fxprof stop exited $IT_RC"; }
it_run start2 "$FXPROF" start "$jpid" --agent "$FXAGENT_LIB" \
    --options "interval=5ms,push=http://127.0.0.1:$PORT/ingest,service=second,labels=env=test" \
    -o "$RUN/pyro/app.json.gz"
[[ $IT_RC -eq 0 ]] || { kill "$jpid"; it_fail "restart: fxprof start exited $IT_RC"; }
wait "$jpid" || it_fail "restart: java exited with an error: $(cat pyro.err)"
kill "$FIRST_PID" 2>/dev/null || true
wait "$FIRST_PID" 2>/dev/null || true
stop_receiver
python3 "$IT_DIR/push_check.py" otlp "$RUN/first" "$RUN/first.json.gz" --service first --refused 0 ||
    it_fail "restart: the stop's file did not reach the first receiver, once"
python3 "$IT_DIR/push_check.py" pyroscope "$RUN/pyro" "$RUN/pyro/app.json.gz" \
    --service second --label env=test --hot 'LockWorkload.lambda$known' --go "$GO" ||
    it_fail "restart: the ingest request of the second start is wrong"

# ---- refused: nothing listens ----
python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' >free.port
it_run refused "$IT_JDK/bin/java" \
    "-agentpath:$FXAGENT_LIB=push=http://127.0.0.1:$(cat free.port)/v1development/profiles,quiet,file=$RUN/refused.json.gz" \
    -jar "$FXAGENT_LOCKS_JAR" known 1
[[ $IT_RC -eq 0 ]] || it_fail "refused: java exited $IT_RC"
grep -q 'fxagent: push: 1 periods not delivered at exit' refused.err ||
    it_fail "refused: the undelivered period is not said"
# ---- too large: memory=1m leaves the push 256 KiB; converting the period would take more ----
receiver "$RUN/large" "$RUN/large/port"
it_run large "$IT_JDK/bin/java" \
    "-agentpath:$FXAGENT_LIB=memory=1m,push=http://127.0.0.1:$PORT/v1development/profiles,quiet,file=$RUN/large.json.gz" \
    -jar "$FXAGENT_LOCKS_JAR" known 1
[[ $IT_RC -eq 0 ]] || it_fail "large: java exited $IT_RC"
stop_receiver
grep -q 'fxagent: push: 0 failed attempts, 0 periods dropped so far (at most 16 wait; oldest first), 0 refused, 1 too large for memory=; last: push: .* would take about [0-9]* KiB to convert ([0-9]* KiB of JSON), more than the push.s 256 KiB of memory=: not pushed' large.err ||
    it_fail "large: the period too large for memory= is not said: $(cat large.err)"
[[ -z $(ls "$RUN/large") || $(ls "$RUN/large") == port ]] || it_fail "large: something was pushed"
echo "$IT_NAME: ok"
