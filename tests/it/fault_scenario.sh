#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One fault scenario; each prints "survives: ..." and asserts it:
#   missing_dir  file=/nonexistent/dir/x.json.gz: exit 0, the profile is in the fallback folder
#                ($TMPDIR, private to the test) and stderr names it
#   dev_full     file=/dev/full/x.json.gz (open fails: Not a directory): the same fallback
#   sigkill_dump a complete dump at T, then a second dump to T by jcmd and SIGKILL 0 ms and 30 ms
#                after its temporary file appears (two JVMs, 6 threads at 1 ms): T is still a
#                complete valid profile (the old or the new one), never partial; leftover
#                .T.json.gz.tmp.* files are counted, not failed
#   exit_dump    loop=1s, System.exit(42) asked while a loop file is written: exit code 42, every
#                file written is valid, and the last one (VM death) exists
#   halt         Runtime.halt(43) (no VMDeath): exit code 43, no hs_err; no profile is expected,
#                any file that did appear must be valid
#   sigterm      SIGTERM: exit code 143, the profile is written at shutdown and valid
# usage: fault_scenario.sh SCENARIO JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
sc=$1
it_init "it.fault.$sc.jdk$(fx_jdk_major "$2")" "$2"
source "$IT_DIR/stress_lib.sh"
run=$FXAGENT_RUN_DIR
fb=$run/fallback
W=fxagent.stress.StressWorkload

fallback_case() {
    local target=$1
    st_run w "interval=1ms,file=$target" -- spin 2 2 "$run/ready"
    [[ $ST_RC -eq 0 ]] || it_fail "the JVM exited $ST_RC"
    it_no_hs_err
    st_check "$fb/x.json.gz" "$W.busyUntil"
    grep -qF "$fb/x.json.gz" w.err || it_fail "stderr does not name $fb/x.json.gz"
    echo "$IT_NAME: survives: exit 0; the profile, valid, in the fallback folder $fb, named on stderr"
}

# One JVM: a complete dump at T, a bigger recording, a second dump to T by jcmd and SIGKILL
# DELAY ms after that dump's temporary file (.T.json.gz.tmp.*) appears, i.e. mid-write.
# Returns 1 (and the caller tries again with a new JVM) when the dump was over before the poll
# saw its temporary file: then the kill did not land mid-write and proves nothing.
sigkill_round() {
    local delay=$1 d=$run/k$1-$2
    local t=$d/T.json.gz
    mkdir -p "$d"
    rm -f "$run/ready"
    st_start "k$1-$2" "interval=1ms,file=$d/exit.json.gz" -- spin 6 40 "$run/ready"
    st_wait_file "$run/ready"
    sleep 1
    st_jcmd "dump,file=$t"
    st_check "$t" "$W.busyUntil" >/dev/null
    local before
    before=$(md5sum <"$t")
    sleep 3
    st_jcmd "dump,file=$t" &
    local jc=$! seen=0 until=$((SECONDS + 30))
    # compgen is a builtin: this loop forks nothing, so it sees a temporary file that lives ms.
    while ((SECONDS < until)); do
        if compgen -G "$d/.T.json.gz.tmp.*" >/dev/null; then
            seen=1
            break
        fi
        kill -0 "$jc" 2>/dev/null || break
    done
    [[ $seen -eq 1 && $delay -gt 0 ]] && sleep "$(printf '0.%03d' "$delay")"
    kill -9 "$ST_PID"
    st_wait
    wait "$jc" || true
    if [[ $seen -ne 1 ]]; then
        echo "$IT_NAME: attempt $2: the second dump ended between two polls; another JVM"
        return 1
    fi
    [[ $ST_RC -eq 137 ]] || it_fail "the JVM exited $ST_RC, not by SIGKILL (137)"
    st_check "$t" "$W.busyUntil"
    local after tmps others what
    after=$(md5sum <"$t")
    tmps=$(find "$d" -name '.T.json.gz.tmp.*' | wc -l)
    others=$(find "$d" -type f ! -name 'T.json.gz' ! -name 'T.json.gz.summary.json' ! -name '.T.json.gz.tmp.*' | wc -l)
    [[ $others -eq 0 ]] || it_fail "stray files in $d: $(ls -a "$d")"
    [[ $before == "$after" ]] && what="the first dump, unchanged" || what="the second dump, complete"
    echo "$IT_NAME: SIGKILL ${delay} ms into the second dump: T is valid ($what); leftover temp files: $tmps"
    ls -la "$d" | sed "s/^/$IT_NAME:   /"
}

case $sc in
missing_dir) fallback_case /nonexistent/dir/x.json.gz ;;
dev_full) fallback_case /dev/full/x.json.gz ;;
sigkill_dump)
    for delay in 0 30; do
        for attempt in 1 2 3 4; do
            sigkill_round "$delay" "$attempt" && break
            [[ $attempt -lt 4 ]] || it_fail "the second dump's temporary file never appeared (4 JVMs)"
        done
    done
    it_no_hs_err
    echo "$IT_NAME: survives: T is a complete valid profile after each SIGKILL, never partial"
    ;;
exit_dump)
    st_start w "interval=1ms,loop=1s,file=$run/e-%n.json.gz" -- spin 8 60 "$run/ready" "$run/exit" 42 exit
    st_wait_file "$run/ready"
    sleep 2
    # Exit when a loop file's temporary file exists, i.e. while it is written (builtin loop).
    mid=0 until=$((SECONDS + 20))
    while ((SECONDS < until)); do
        if compgen -G "$run/.e-*.tmp.*" >/dev/null; then
            mid=1
            break
        fi
    done
    touch "$run/exit"
    st_wait
    echo "$IT_NAME: System.exit asked while a loop file was being written: $([[ $mid -eq 1 ]] && echo yes || echo no)"
    [[ $ST_RC -eq 42 ]] || it_fail "the JVM exited $ST_RC, expected System.exit's 42"
    it_no_hs_err
    mapfile -t files < <(find "$run" -maxdepth 1 -name 'e-*.json.gz' -printf "$run/%f\n" | sort -V)
    [[ ${#files[@]} -ge 2 ]] || it_fail "only ${#files[@]} profile files"
    for f in "${files[@]}"; do st_check "$f" >/dev/null; done
    grep -qF "${files[-1]}" w.err || it_fail "stderr does not name the last file ${files[-1]}"
    tmps=$(find "$run" -maxdepth 1 -name '.e-*' | wc -l)
    echo "$IT_NAME: survives: exit code 42; ${#files[@]} files, all valid, the last ${files[-1]##*/}; temp files left: $tmps"
    [[ $tmps -eq 0 ]] || it_fail "temp files left after a normal exit"
    ;;
halt)
    st_start w "interval=1ms,file=$run/h.json.gz" -- spin 20 60 "$run/ready" "$run/exit" 43 halt
    st_wait_file "$run/ready"
    sleep 1
    touch "$run/exit"
    st_wait
    [[ $ST_RC -eq 43 ]] || it_fail "the JVM exited $ST_RC, expected Runtime.halt's 43"
    it_no_hs_err
    if [[ -e $run/h.json.gz ]]; then
        st_check "$run/h.json.gz"
        echo "$IT_NAME: a profile was written despite halt, and it is valid"
    else
        echo "$IT_NAME: no profile (expected: Runtime.halt sends no VMDeath)"
    fi
    echo "$IT_NAME: survives: exit code 43, no crash, no hs_err; no profile is expected"
    ;;
sigterm)
    st_start w "interval=1ms,file=$run/t.json.gz" -- spin 4 60 "$run/ready"
    st_wait_file "$run/ready"
    sleep 1
    kill -TERM "$ST_PID"
    st_wait
    [[ $ST_RC -eq 143 ]] || it_fail "the JVM exited $ST_RC, expected 143 (SIGTERM)"
    it_no_hs_err
    st_check "$run/t.json.gz" "$W.busyUntil"
    echo "$IT_NAME: survives: exit code 143, the profile written at shutdown, valid"
    ;;
*) it_fail "unknown scenario $sc" ;;
esac
echo "$IT_NAME: OK"
