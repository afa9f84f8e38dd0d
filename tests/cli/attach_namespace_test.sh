#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof reaches JVMs in containers, simulated with unshare (skipped where that is not
# allowed), on every JDK the integration tests use; in both cases the JVM is pid 1 of its own
# pid namespace and has a /tmp of its own:
#   "tmp":  same root file system; the socket and the reply file are found through
#           /proc/PID/root/tmp and NSpid; the reply file is removed afterwards; an agent the
#           JVM cannot see (a directory its mount namespace covers, as a private /tmp covers a
#           checkout under /tmp) is copied into its /tmp, one it sees is loaded where it is;
#   "root": its own root file system; libfxagent.so (here the fake agent) is copied into its
#           /tmp once, named by content, and a start and two dumps load that one copy (one
#           mapping; the dumps find it mapped under its fxagent-<hash>.so name).
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_attach_namespace
[[ -n "${FXPROF_FAKE_AGENT:-}" && -f "$FXPROF_FAKE_AGENT" ]] || cli_fail "the fake agent is not built"
unshare --fork --pid --mount-proc sh -c 'mount -t tmpfs fxprof-probe /mnt' 2>/dev/null ||
    cli_skip "unshare --pid --mount with mounts is not permitted here"
stop_ns_jvm() {
    if [[ -n "${jvm:-}" ]]; then
        kill "$jvm" 2>/dev/null || true
        wait 2>/dev/null || true
        jvm=
    fi
}
trap stop_ns_jvm EXIT

# start_ns LOG ARGS...: runs in_namespace.sh ARGS under unshare; sets jvm (host pid of java).
start_ns() {
    local log=$1 u exe
    shift
    unshare --fork --pid --mount-proc sh "$CLI_DIR/in_namespace.sh" "$@" >"$log.out" 2>"$log.err" &
    u=$!
    jvm=
    for _ in $(seq 1 600); do
        if grep -q '^ready$' "$log.out"; then
            jvm=$(pgrep -P "$u" | head -n 1)
            exe=$(readlink "/proc/$jvm/exe" || true)
            [[ $exe == */bin/java ]] || cli_fail "$log: pid $jvm is $exe, not java"
            [[ $(awk '/^NSpid:/ {print $NF}' "/proc/$jvm/status") == 1 ]] ||
                cli_fail "$log: the JVM is not pid 1 of its namespace"
            return 0
        fi
        kill -0 "$u" 2>/dev/null || cli_fail "$log: the namespace exited: $(cat "$log.err")"
        sleep 0.1
    done
    cli_fail "$log: the JVM did not start within 60 s"
}

fx_jdks_discover
((${#FX_JDK_HOMES[@]} > 0)) || cli_fail "no JDK to test with"
for k in "${!FX_JDK_HOMES[@]}"; do
    jdk=${FX_JDK_HOMES[$k]} major=${FX_JDK_MAJORS[$k]}

    echo "$CLI_NAME: JDK $major, private /tmp"
    rm -rf hidden && mkdir hidden && cp "$FXPROF_FAKE_AGENT" hidden/fake_agent.so
    start_ns "tmp$major" tmp "$CLI_DIR/Sleeper.java" "$PWD/hidden" "$jdk/bin/java" Sleeper.java 300
    cli_run "tmpprops$major" "$FXPROF" attach-raw "$jvm" properties
    [[ $CLI_RC -eq 0 ]] && grep -Eq "^java\.version=$major([.+-]|$)" "tmpprops$major.out" ||
        cli_fail "JDK $major, private /tmp: attach-raw properties failed"
    [[ -S /proc/$jvm/root/tmp/.java_pid1 ]] || cli_fail "no socket in the JVM's own /tmp"
    # dump speaks only to a loaded agent: start loads it.
    cli_run "tmpstart$major" "$FXPROF" start "$jvm" --agent "$FXPROF_FAKE_AGENT"
    [[ $CLI_RC -eq 0 ]] || cli_fail "JDK $major, private /tmp: start through the fake agent failed"
    cli_run "tmpdump$major" "$FXPROF" dump "$jvm" -o /x.json --agent "$FXPROF_FAKE_AGENT"
    [[ $CLI_RC -eq 0 ]] && grep -qx "pid $jvm: fake agent did dump to /x.json" "tmpdump$major.out" ||
        cli_fail "JDK $major, private /tmp: dump through the fake agent failed"
    # The fake agent itself is hidden from the JVM exactly when the build is under /tmp.
    fake=$(realpath "$FXPROF_FAKE_AGENT")
    if [[ $fake == /tmp/* ]]; then want_fake=0; else want_fake=1; fi
    got_fake=0
    # A path ending in $fake: from a chroot the kernel shows the JVM's files (another mount
    # namespace) with the chroot's own folder in front.
    if awk -v f="$fake" 'substr($0, length($0) - length(f) + 1) == f { n++ } END { exit !n }' \
        "/proc/$jvm/maps"; then got_fake=1; fi
    [[ $got_fake -eq $want_fake ]] ||
        cli_fail "the JVM mapped $fake: $got_fake, expected $want_fake (it is visible to it: $want_fake)"
    # start loads (dump only speaks to a loaded agent): the JVM gets a copy in its own /tmp.
    cli_run "tmphidden$major" "$FXPROF" start "$jvm" --agent hidden/fake_agent.so
    [[ $CLI_RC -eq 0 ]] && grep -qx "pid $jvm: fake agent did start" "tmphidden$major.out" ||
        cli_fail "JDK $major, private /tmp: start through an agent the JVM cannot see failed"
    grep -qF "$PWD/hidden/" "/proc/$jvm/maps" && cli_fail "the JVM mapped a file it cannot see"
    copies=$(find "/proc/$jvm/root/tmp/" -maxdepth 1 -name 'fxagent-????????????????.so' | wc -l)
    [[ $copies -eq 1 ]] || cli_fail "expected one copy of the hidden agent in the JVM's /tmp, found $copies"
    mapped=$(grep -o '/tmp/fxagent-[0-9a-f]*\.so' "/proc/$jvm/maps" | sort -u | wc -l)
    [[ $mapped -eq 1 ]] || cli_fail "the JVM mapped $mapped agent copies, expected 1"
    left=$(find "/proc/$jvm/root/tmp/" -maxdepth 1 -name 'fxprof-*' | wc -l)
    [[ $left -eq 0 ]] || cli_fail "a reply file was left behind"
    stop_ns_jvm

    echo "$CLI_NAME: JDK $major, own root file system"
    mkdir -p "root$major"
    start_ns "root$major" root "$FXAGENT_RUN_DIR/root$major" "$CLI_DIR/Sleeper.java" \
        "$jdk/bin/java" /app/Sleeper.java 300
    cli_run "rootprops$major" "$FXPROF" attach-raw "$jvm" properties
    [[ $CLI_RC -eq 0 ]] && grep -q '^user\.dir=/$' "rootprops$major.out" ||
        cli_fail "JDK $major, own root: attach-raw properties failed"
    cli_run "rootstart$major" "$FXPROF" start "$jvm" --agent "$FXPROF_FAKE_AGENT"
    [[ $CLI_RC -eq 0 ]] || cli_fail "JDK $major, own root: start through the copied fake agent failed"
    for f in a b; do
        cli_run "rootdump$f$major" "$FXPROF" dump "$jvm" -o "$f.json" --agent "$FXPROF_FAKE_AGENT"
        [[ $CLI_RC -eq 0 ]] && grep -qx "pid $jvm: fake agent did dump to $f.json" "rootdump$f$major.out" ||
            cli_fail "JDK $major, own root: dump $f through the copied fake agent failed"
    done
    copies=$(find "/proc/$jvm/root/tmp/" -maxdepth 1 -name 'fxagent-????????????????.so' | wc -l)
    [[ $copies -eq 1 ]] || cli_fail "expected one copy of the agent in the JVM's /tmp, found $copies"
    mapped=$(grep -o '/tmp/fxagent-[0-9a-f]*\.so' "/proc/$jvm/maps" | sort -u | wc -l)
    [[ $mapped -eq 1 ]] || cli_fail "the JVM mapped $mapped agent copies, expected 1"
    stop_ns_jvm
done
echo "$CLI_NAME: OK"
