#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One agent-misuse scenario (docs/RELIABILITY.md, "Misuse: the agent"). Nothing that is not
# the agent's is changed, and no profile is lost. Special files are our own, made in the run
# dir (mknod needs root: without it the device cases use nothing and say so), never the real
# /dev/null: an old build would replace it.
#   chardev  file= a character device (a null node), a link to it, and a full node (c 1 7):
#            each stays the same device; the null gets the stream, the full's profile goes to
#            the fallback folder with "could not write X (...No space left...); wrote Y instead"
#   fifo     file= a FIFO that a process reads: the reader gets a valid gzip profile; a FIFO
#            that no process reads: the JVM does not hang, the profile goes to the fallback
#            folder with the reason; both stay FIFOs
#   stdout   file= a link to /proc/self/fd/1 (what /dev/stdout is) and /proc/self/fd/1, with
#            stdout a pipe: the profile is the stream after the workload's output; the link stays
#   refused  file= a block device node or a socket: the JVM does not start, one fxagent: line
#            names the kind, the node and the socket stay
#   folder   file= an existing folder, and one written with a trailing '/': the profile is
#            inside it under the default name; file=missing/ goes to the fallback folder
#   notours  file= an existing file that is not a profile (text): refused at start with one line,
#            the file unchanged; one that appears during the run: kept, the profile goes to the
#            fallback folder; file=~/p.json.gz goes under $HOME and file=rel/p.json.gz under the
#            working folder, and the lines name the absolute path
#   twice    the agent loaded twice, 50 JVMs (same path, a copy of the .so, JAVA_TOOL_OPTIONS
#            plus -agentpath; two at a time): exit 0, no hs_err, exactly one "already loaded"
#            line, the first load's profile valid, no second profile
# usage: misuse_scenario.sh SCENARIO JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
sc=$1
it_init "it.misuse.$sc.jdk$(fx_jdk_major "$2")" "$2"
source "$IT_DIR/stress_lib.sh"
run=$FXAGENT_RUN_DIR
fb=$run/fallback
W=fxagent.stress.StressWorkload
JVM=(-Xmx64m -XX:+UseSerialGC)
n_ready=0

# st_run with a fresh ready file; a short JVM (1 busy thread, 1 s).
short_run() {
    local log=$1 opts=$2
    n_ready=$((n_ready + 1))
    st_run "$log" "$opts" "${JVM[@]}" -- spin 1 1 "$run/ready-$n_ready"
}

# kind_of PATH: "c 1,3", "p", "b 7,200", "s", "l TARGET", "d", "-" (ls-style, no following)
kind_of() {
    if [[ -L $1 ]]; then
        echo "l $(readlink "$1")"
    else
        stat -c '%F %t,%T' "$1"
    fi
}

expect_kind() {
    local now
    now=$(kind_of "$1")
    [[ $now == "$2" ]] || it_fail "$1 changed: was '$2', now '$now' (the agent replaced it)"
}

expect_fallback_line() {
    local log=$1 target=$2 written=$3 why=$4 line
    line=$(grep -F "fxagent: could not write $target" "$log.err" || true)
    [[ -n $line ]] || it_fail "no 'could not write $target' line"
    [[ $line == *"$why"* && $line == *"; wrote $written instead ("* ]] ||
        it_fail "the fallback line does not say '$why' and 'wrote $written instead': $line"
    st_check "$written" >/dev/null
}

need_root() {
    if [[ $(id -u) -ne 0 ]]; then
        echo "$IT_NAME: SKIPPED: mknod needs root (device nodes are made in the run dir)"
        echo "$IT_NAME: OK"
        exit 0
    fi
}

chardev() {
    need_root
    mknod "$run/null" c 1 3
    mknod "$run/full" c 1 7
    ln -s null "$run/to-null"
    local null full
    null=$(kind_of "$run/null")
    full=$(kind_of "$run/full")
    short_run null "file=$run/null"
    [[ $ST_RC -eq 0 ]] || it_fail "file=null: the JVM exited $ST_RC"
    expect_kind "$run/null" "$null"
    grep -qF "fxagent: wrote " null.err && grep -qF " to $run/null (" null.err ||
        it_fail "file=null: no 'wrote ... to $run/null' line"
    short_run link "file=$run/to-null"
    [[ $ST_RC -eq 0 ]] || it_fail "file=link: the JVM exited $ST_RC"
    expect_kind "$run/to-null" "l null"
    expect_kind "$run/null" "$null"
    short_run full "file=$run/full"
    [[ $ST_RC -eq 0 ]] || it_fail "file=full: the JVM exited $ST_RC"
    expect_kind "$run/full" "$full"
    expect_fallback_line full "$run/full" "$fb/full.json.gz" "No space left on device"
    it_no_hs_err
    echo "$IT_NAME: survives: the null node took the stream, the link stayed, the full node's profile went to $fb/full.json.gz; every node is the same device"
}

fifo() {
    mkfifo "$run/read.fifo" "$run/unread.fifo"
    # The reader opens the FIFO before the JVM starts; it ends when the writer closes.
    cat "$run/read.fifo" >"$run/got.json.gz" &
    local reader=$!
    short_run read "file=$run/read.fifo"
    [[ $ST_RC -eq 0 ]] || it_fail "read.fifo: the JVM exited $ST_RC"
    local i
    for ((i = 0; i < 100; i++)); do
        kill -0 "$reader" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$reader" 2>/dev/null; then
        kill "$reader"
        it_fail "the FIFO's reader got no end of stream (was the FIFO replaced?)"
    fi
    wait "$reader" || true
    expect_kind "$run/read.fifo" "fifo 0,0"
    st_check "$run/got.json.gz" "$W.busyUntil"
    short_run unread "file=$run/unread.fifo"
    [[ $ST_RC -eq 0 ]] || it_fail "unread.fifo: the JVM exited $ST_RC"
    expect_kind "$run/unread.fifo" "fifo 0,0"
    expect_fallback_line unread "$run/unread.fifo" "$fb/unread.fifo.json.gz" "no process reads"
    it_no_hs_err
    echo "$IT_NAME: survives: the reader got a valid gzip profile; the FIFO without a reader did not hang the JVM and its profile went to the fallback folder; both are FIFOs still"
}

# The profile after the workload's "done spin" line on stdout.
profile_from_stdout() {
    python3 - "$1" "$2" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
at = data.find(b"\x1f\x8b")
if at < 0 or not data[:at].startswith(b"done spin"):
    sys.exit("stdout holds no gzip stream after the workload's output (%d bytes)" % len(data))
open(sys.argv[2], "wb").write(data[at:])
EOF
}

stdout() {
    ln -s /proc/self/fd/1 "$run/stdout"
    local t
    for t in "$run/stdout" /proc/self/fd/1; do
        n_ready=$((n_ready + 1))
        mkdir -p "$fb"
        echo "$IT_NAME: file=$t, stdout a pipe"
        ST_RC=0
        TMPDIR=$fb "$IT_JDK/bin/java" "-agentpath:$FXAGENT_LIB=file=$t" "${JVM[@]}" \
            -cp "$FXAGENT_STRESS_JAR" $W spin 1 1 "$run/ready-$n_ready" 2>pipe.err |
            cat >pipe.out || ST_RC=$?
        sed "s/^/$IT_NAME: stderr: /" pipe.err
        [[ $ST_RC -eq 0 ]] || it_fail "file=$t: the pipeline exited $ST_RC"
        profile_from_stdout pipe.out "$run/from-stdout-$n_ready.json.gz" ||
            it_fail "file=$t: no profile on stdout"
        st_check "$run/from-stdout-$n_ready.json.gz" "$W.busyUntil"
    done
    expect_kind "$run/stdout" "l /proc/self/fd/1"
    it_no_hs_err
    echo "$IT_NAME: survives: both names put a valid profile on stdout; the link stayed a link"
}

refused() {
    need_root
    mknod "$run/blk" b 7 200
    python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$run/sock"
    local t kind before line n
    for t in blk sock; do
        before=$(kind_of "$run/$t")
        kind=$([[ $t == blk ]] && echo "a block device" || echo "a socket")
        short_run "$t" "file=$run/$t"
        [[ $ST_RC -ne 0 ]] || it_fail "file=$t: the JVM started (exit 0)"
        grep -q 'done spin' "$t.out" && it_fail "file=$t: the workload ran"
        n=$(grep -c '^fxagent: ' "$t.err" || true)
        [[ $n -eq 1 ]] || it_fail "file=$t: $n fxagent: lines, expected 1"
        line=$(grep '^fxagent: ' "$t.err")
        [[ $line == *"$run/$t"*"$kind"* ]] || it_fail "file=$t: the line does not name $kind: $line"
        expect_kind "$run/$t" "$before"
    done
    [[ -z $(find "$fb" -type f) ]] || it_fail "a refused start wrote files: $(find "$fb" -type f)"
    it_no_hs_err
    echo "$IT_NAME: survives: both refused at start with one line; the node and the socket stayed"
}

folder() {
    mkdir "$run/d" "$run/e"
    local t dir files
    for t in "$run/d" "$run/e/"; do
        dir=${t%/}
        short_run "$(basename "$dir")" "file=$t"
        [[ $ST_RC -eq 0 ]] || it_fail "file=$t: the JVM exited $ST_RC"
        mapfile -t files < <(find "$dir" -name 'fxagent-*.json.gz')
        [[ ${#files[@]} -eq 1 ]] || it_fail "file=$t: ${#files[@]} profiles inside $dir, expected 1"
        st_check "${files[0]}" "$W.busyUntil"
        [[ -d $dir ]] || it_fail "$dir is no longer a folder"
    done
    short_run missing "file=$run/missing/"
    [[ $ST_RC -eq 0 ]] || it_fail "file=missing/: the JVM exited $ST_RC"
    grep -q "^fxagent: warning: option 'file': cannot write in $run/missing " missing.err ||
        it_fail "file=missing/: no warning at start"
    files=("$fb"/fxagent-*.json.gz)
    [[ -f ${files[0]} ]] || it_fail "file=missing/: nothing in the fallback folder"
    expect_fallback_line missing "$run/missing/fxagent-" "${files[0]}" "No such file or directory"
    it_no_hs_err
    echo "$IT_NAME: survives: a folder and a name ending in '/' got the profile inside under the default name; a missing folder warned at start and fell back"
}

notours() {
    echo "127.0.0.1 localhost" >"$run/notes.txt"
    short_run notes "file=notes.txt"
    [[ $ST_RC -ne 0 ]] || it_fail "file=notes.txt (a text file): the JVM started"
    local n line
    n=$(grep -c '^fxagent: ' notes.err || true)
    line=$(grep '^fxagent: ' notes.err || true)
    [[ $n -eq 1 && $line == *"$run/notes.txt: it exists and is not a profile"* ]] ||
        it_fail "file=notes.txt: expected one line saying it is not a profile: $line"
    [[ $(cat "$run/notes.txt") == "127.0.0.1 localhost" ]] || it_fail "notes.txt changed"
    n_ready=$((n_ready + 1))
    st_start late "file=late.txt" "${JVM[@]}" -- spin 1 2 "$run/ready-$n_ready"
    st_wait_file "$run/ready-$n_ready"
    echo "written by someone else" >"$run/late.txt"
    st_wait
    [[ $ST_RC -eq 0 ]] || it_fail "file=late.txt: the JVM exited $ST_RC"
    [[ $(cat "$run/late.txt") == "written by someone else" ]] || it_fail "late.txt changed"
    expect_fallback_line late "$run/late.txt" "$fb/late.txt.json.gz" "not a profile"
    mkdir -p "$run/home" "$run/rel"
    HOME=$run/home short_run home "file=~/p.json.gz"
    [[ $ST_RC -eq 0 ]] || it_fail "file=~/p.json.gz: the JVM exited $ST_RC"
    grep -qF " to $run/home/p.json.gz (" home.err || it_fail "file=~/p.json.gz: not under \$HOME"
    st_check "$run/home/p.json.gz" >/dev/null
    short_run rel "file=rel/p.json.gz"
    [[ $ST_RC -eq 0 ]] || it_fail "file=rel/p.json.gz: the JVM exited $ST_RC"
    grep -qF " to $run/rel/p.json.gz (" rel.err || it_fail "file=rel/p.json.gz: the line does not name $run/rel/p.json.gz"
    it_no_hs_err
    echo "$IT_NAME: survives: a text file refused at start and kept; one written during the run kept, the profile in the fallback folder; ~/ and relative names resolved and named whole"
}

# One double load: round I, variant V (same|copy|env). Prints nothing; fails with the reason.
twice_round() {
    local i=$1 v=$2 d=$run/r$1 first second lib2 rc=0
    mkdir -p "$d"
    first=$d/first.json.gz
    second=$d/second.json.gz
    lib2=$FXAGENT_LIB
    [[ $v == same ]] || lib2=$run/copy/libfxagent.so
    local -a cmd=("$IT_JDK/bin/java" -Xshare:auto "${JVM[@]}")
    if [[ $v == env ]]; then
        cmd+=("-agentpath:$lib2=file=$second")
        (cd "$d" && JAVA_TOOL_OPTIONS="\"-agentpath:$FXAGENT_LIB=file=$first\"" TMPDIR=$fb \
            "${cmd[@]}" -cp "$FXAGENT_STRESS_JAR" $W spin 1 0 "$d/ready" >"$d/out" 2>"$d/err") ||
            rc=$?
    else
        cmd+=("-agentpath:$FXAGENT_LIB=file=$first" "-agentpath:$lib2=file=$second")
        (cd "$d" && TMPDIR=$fb "${cmd[@]}" -cp "$FXAGENT_STRESS_JAR" $W spin 1 0 "$d/ready" \
            >"$d/out" 2>"$d/err") || rc=$?
    fi
    local why=""
    local n
    n=$(grep -c 'already loaded' "$d/err" || true)
    if [[ $rc -ne 0 ]]; then
        why="exit $rc"
    elif [[ -n $(find "$d" -name 'hs_err_pid*') ]]; then
        why="hs_err file"
    elif [[ $n -ne 1 ]]; then
        why="$n 'already loaded' lines"
    elif ! grep -q "^fxagent: the agent is already loaded in this JVM (.*, file=$first); this second load does nothing$" "$d/err"; then
        why="the line does not name the first load's file"
    elif [[ -e $second ]]; then
        why="the second load wrote a profile"
    elif ! "$FXCHECK" "$first" >"$d/check" 2>&1; then
        why="the first profile is missing or invalid: $(cat "$d/check")"
    fi
    if [[ -n $why ]]; then
        echo "$IT_NAME: round $i ($v): $why" >&2
        sed "s/^/$IT_NAME: round $i: /" "$d/err" >&2
        return 1
    fi
}

twice() {
    mkdir -p "$run/copy" "$fb"
    cp "$FXAGENT_LIB" "$run/copy/libfxagent.so"
    local variants=(same copy env) i failed=0 pids=()
    for ((i = 1; i <= 50; i += 2)); do
        twice_round "$i" "${variants[i % 3]}" &
        pids=($!)
        twice_round $((i + 1)) "${variants[(i + 1) % 3]}" &
        pids+=($!)
        wait "${pids[0]}" || failed=$((failed + 1))
        wait "${pids[1]}" || failed=$((failed + 1))
    done
    [[ $failed -eq 0 ]] || it_fail "$failed of 50 double loads failed (see above)"
    sed "s/^/$IT_NAME: round 1: /" "$run/r1/err"
    it_no_hs_err
    echo "$IT_NAME: survives: 50 JVMs with the agent loaded twice (same path, a copy, JAVA_TOOL_OPTIONS): exit 0, no crash, one 'already loaded' line each, the first profile valid"
}

case $sc in
chardev | fifo | stdout | refused | folder | notours | twice) "$sc" ;;
*) it_fail "unknown scenario $sc" ;;
esac
echo "$IT_NAME: OK"
