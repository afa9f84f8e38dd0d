#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof start|dump|stop|status on processes that are not an attachable HotSpot JVM: each is
# refused with one "fxprof: " line and exit 1 (2 for a pid that is not a number), and no signal
# reaches the target. The target is tests/cli/sigrec.c, which catches SIGQUIT (so a "handles
# SIGQUIT?" check alone would let the attach's SIGQUIT through) and logs every signal it gets:
#   a plain non-JVM; one whose maps cannot be read (PR_SET_DUMPABLE 0; run as nobody when we are
#   root, since root may read any maps); one that maps a file named libjvm.so as data;
#   a zombie; a pid that does not exist; PID 1; a negative pid; another user's process;
#   one attached to the moment it was launched (refused at once, not after the wait a JVM
#   still starting gets); one that looks like a java launcher (named java) but never maps
#   libjvm.so: waited for 10 s, one line saying so, then refused, unsignalled.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_misuse_targets
[[ -n "${FXPROF_SIGREC:-}" && -x "$FXPROF_SIGREC" ]] || cli_fail "FXPROF_SIGREC is not built"
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
}
trap cleanup EXIT

# Another user for the maps and permission cases: nobody when root, else ourselves.
as_other=()
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
    as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
# The other user must reach the binaries and write the logs wherever the checkout is.
bin=$(mktemp -d)
trap 'cleanup; rm -rf "$bin"' EXIT
cp "$FXPROF" "$FXPROF_SIGREC" "$bin/"
chmod 755 "$bin" "$bin"/*
mkdir -m 1777 logs
FX=$bin/fxprof

# start_target NAME [ARG...] [-- WRAPPER...]: starts sigrec logging to logs/NAME; sets TPID.
start_target() {
    local name=$1
    shift
    local wrap=() args=()
    while (($#)); do
        if [[ $1 == -- ]]; then
            shift
            wrap=("$@")
            break
        fi
        args+=("$1")
        shift
    done
    "${wrap[@]}" "$bin/fxprof_sigrec" "$PWD/logs/$name" "${args[@]}" &
    TPID=$! TNAME=$name
    pids+=("$TPID")
    for _ in $(seq 1 100); do
        [[ -f logs/$name.ready ]] && return 0
        sleep 0.05
    done
    cli_fail "target $name did not start"
}

# untouched NAME: the target is alive and logged no signal.
untouched() {
    kill -0 "$TPID" 2>/dev/null || cli_fail "$1: the target died"
    [[ ! -s logs/$1 ]] || cli_fail "$1: the target received signal(s) $(tr '\n' ' ' <"logs/$1")"
}

# expect_refused LOG RC PATTERN CMD...: no signal reached the current target ($TNAME, if set),
# then: one "fxprof: " line matching PATTERN, nothing on stdout, exit RC.
expect_refused() {
    local log=$1 rc=$2 pattern=$3
    shift 3
    cli_run "$log" "$@"
    [[ -z ${TNAME:-} ]] || untouched "$TNAME"
    [[ $(wc -l <"$log.err") -eq 1 ]] || cli_fail "$log: stderr has $(wc -l <"$log.err") lines, expected one"
    grep -Eq -- "^fxprof: .*$pattern" "$log.err" || cli_fail "$log: stderr does not match /$pattern/"
    [[ ! -s "$log.out" ]] || cli_fail "$log: unexpected output on stdout"
    [[ $CLI_RC -eq $rc ]] || cli_fail "$log: exit $CLI_RC, expected $rc"
}

start_target plain
for cmd in start dump stop status; do
    expect_refused "plain-$cmd" 1 "process $TPID \(fxprof_sigrec\) is not a HotSpot JVM" "$FX" "$cmd" "$TPID"
done
untouched plain

# Its maps are unreadable, it is ours to signal, and it catches SIGQUIT: only the maps check
# stands between it and a SIGQUIT.
start_target undumpable --undumpable -- "${as_other[@]}"
expect_refused undumpable 1 "cannot read /proc/$TPID/maps \(Permission denied\).*not signalled" \
    "${as_other[@]}" "$FX" dump "$TPID"
expect_refused undumpable-status 1 "cannot read /proc/$TPID/maps" "${as_other[@]}" "$FX" status "$TPID"
untouched undumpable

# A file named libjvm.so mapped as data does not make a JVM.
mkdir -p fakejdk/lib/server
head -c 8192 /dev/zero >fakejdk/lib/server/libjvm.so
start_target datamap --map "$PWD/fakejdk/lib/server/libjvm.so"
grep -q 'libjvm.so' "/proc/$TPID/maps" || cli_fail "the data mapping of libjvm.so is not in the maps"
expect_refused datamap 1 "is not a HotSpot JVM" "$FX" start "$TPID"
untouched datamap

# Another user's process, as that other user cannot signal it.
if ((${#as_other[@]})); then
    start_target rootowned
    expect_refused otheruser 1 "not allowed to signal process $TPID" "${as_other[@]}" "$FX" dump "$TPID"
    untouched rootowned
fi

# Attached to at once, as a script that launches java does: a non-JVM is refused at once (a
# shell's child is given 1 s to exec), with one line.
"$bin/fxprof_sigrec" "$PWD/logs/young" &
TPID=$! TNAME=young
pids+=("$TPID")
SECONDS=0
expect_refused young 1 "process $TPID \((fxprof_sigrec|bash)\) is not a HotSpot JVM" "$FX" start "$TPID"
((SECONDS <= 5)) || cli_fail "young: refused after $SECONDS s, expected at once"

# A process named java that never maps libjvm.so: taken for a JVM still starting, waited for
# (bounded: 10 s, one line says so), then refused with one line; never signalled.
cp "$bin/fxprof_sigrec" "$bin/java"
"$bin/java" "$PWD/logs/fakejava" &
TPID=$! TNAME=fakejava
pids+=("$TPID")
for _ in $(seq 1 100); do
    [[ -f logs/fakejava.ready ]] && break
    sleep 0.05
done
SECONDS=0
cli_run fakejava "$FX" start "$TPID"
untouched fakejava
[[ $CLI_RC -eq 1 ]] || cli_fail "fakejava: exit $CLI_RC, expected 1"
((SECONDS >= 9 && SECONDS <= 20)) || cli_fail "fakejava: refused after $SECONDS s, expected after the 10 s bound"
[[ $(wc -l <fakejava.err) -eq 2 ]] || cli_fail "fakejava: stderr has $(wc -l <fakejava.err) lines, expected two"
grep -qx "fxprof: process $TPID (java) is still starting: waiting up to 10 s for it" fakejava.err ||
    cli_fail "fakejava: the wait is not said"
grep -qx "fxprof: process $TPID (java) is still starting after 10 s: not signalled" fakejava.err ||
    cli_fail "fakejava: the refusal is not said"

TNAME=
# A zombie: the child of a process that never waits for it.
bash -c 'sleep 0.1 & exec sleep 300' &
parent=$!
pids+=("$parent")
zombie=
for _ in $(seq 1 100); do
    zombie=$(cat "/proc/$parent/task/$parent/children" 2>/dev/null | awk '{print $1}')
    [[ -n $zombie ]] && grep -q '^State:.*Z' "/proc/$zombie/status" 2>/dev/null && break
    sleep 0.05
done
grep -q '^State:.*Z' "/proc/$zombie/status" || cli_fail "no zombie to test with"
expect_refused zombie 1 "process $zombie \(sleep\) has exited \(a zombie" "$FX" status "$zombie"

pid_max=$(cat /proc/sys/kernel/pid_max)
expect_refused nopid 1 "no process with pid $pid_max\$" "$FX" dump "$pid_max"
expect_refused pid1 1 "(cannot read /proc/1/maps|process 1 \(.*\) is not a HotSpot JVM)" "$FX" stop 1
kill -0 1
expect_refused negative 2 "'-5' is not a process id" "$FX" dump -5
expect_refused negative2 2 "'-1' is not a process id" "$FX" status -- -1
echo "$CLI_NAME: OK"
