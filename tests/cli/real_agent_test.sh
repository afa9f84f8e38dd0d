#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof with the real libfxagent.so, on every JDK:
#   record -o -: the profile (gzip) alone on stdout, java's own stdout on stderr;
#   record -o FOLDER (an existing one, with or without a final /): the profile inside it, exit 0;
#   record -o into a folder that cannot be written (/proc, a parent that is a file): the agent
#     writes a fallback file, says "could not write X (reason); wrote Y instead", exit 4;
#   attach: dump -o - gives a gzip profile fxprof summary reads; dump -o /proc/nonexistent/...
#     exits 4 with one line saying where it went; two dumps at the same time both succeed;
#     stop, then stop again (1, not running), status (0), and the JVM is still alive.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_real_agent
trap cli_stop_sleeper EXIT
[[ -n "${FXAGENT_LIB:-}" && -f "$FXAGENT_LIB" ]] || cli_skip "libfxagent.so is not built"
[[ -f "$FXAGENT_DEMO_CLASSES/fxagent/demo/Demo.class" ]] || cli_skip "the demo classes are not built"
A=(--agent "$FXAGENT_LIB")

is_gzip_profile() {
    [[ $(head -c 2 "$1" | od -An -tx1 | tr -d ' ') == 1f8b ]] || cli_fail "$1 is not gzip"
    "$FXPROF" summary "$1" >/dev/null || cli_fail "fxprof summary cannot read $1"
}

touch afile
# The agent's fallback folder ($TMPDIR of the JVM): inside the run directory, not /tmp.
mkdir fallback
export TMPDIR=$FXAGENT_RUN_DIR/fallback
fx_jdks_discover
((${#FX_JDK_HOMES[@]} > 0)) || cli_fail "no JDK to test with"
for k in "${!FX_JDK_HOMES[@]}"; do
    jdk=${FX_JDK_HOMES[$k]} major=${FX_JDK_MAJORS[$k]}
    demo=("$jdk/bin/java" -cp "$FXAGENT_DEMO_CLASSES" fxagent.demo.Demo 1)

    cli_run "rec-stdout$major" "$FXPROF" record "${A[@]}" -o - -- "${demo[@]}"
    [[ $CLI_RC -eq 0 ]] || cli_fail "record -o - exited $CLI_RC"
    is_gzip_profile "rec-stdout$major.out"
    grep -q '^fxagent demo: elapsed' "rec-stdout$major.err" || cli_fail "java's stdout did not go to stderr"

    for folder in "$PWD/out $major" "$PWD/new $major/"; do
        mkdir "$folder"
        cli_run "rec-folder$major" "$FXPROF" record "${A[@]}" -o "$folder" -- "${demo[@]}"
        [[ $CLI_RC -eq 0 ]] || cli_fail "record -o '$folder' exited $CLI_RC, expected 0"
        files=("${folder%/}"/fxagent-*.json.gz)
        [[ -f ${files[0]} ]] || cli_fail "record -o '$folder': no profile inside the folder"
        is_gzip_profile "${files[0]}"
    done

    for target in /proc/nonexistent/x.json.gz "$PWD/afile/x.json.gz"; do
        cli_run "rec-fallback$major" "$FXPROF" record "${A[@]}" -o "$target" -- "${demo[@]}"
        [[ $CLI_RC -eq 4 ]] || cli_fail "record -o $target exited $CLI_RC, expected 4"
        grep -q "could not write $target (.*); wrote $TMPDIR/x.json.gz instead" "rec-fallback$major.err" ||
            cli_fail "record -o $target: the agent did not say where the profile went"
        grep -q "^fxprof: java exited with 0 and wrote no profile at $target" "rec-fallback$major.err" ||
            cli_fail "record -o $target: fxprof did not say the file is missing"
    done

    cli_start_sleeper "$jdk" "jvm$major"
    pid=$CLI_JVM_PID
    cli_run "start$major" "$FXPROF" start "$pid" "${A[@]}" -i 1ms
    [[ $CLI_RC -eq 0 ]] || cli_fail "start exited $CLI_RC"
    cli_run "dump-stdout$major" "$FXPROF" dump "$pid" "${A[@]}" -o -
    [[ $CLI_RC -eq 0 ]] || cli_fail "dump -o - exited $CLI_RC"
    is_gzip_profile "dump-stdout$major.out"
    grep -q "^pid $pid: dumped" "dump-stdout$major.err" || cli_fail "dump -o -: the outcome is not on stderr"
    ! ls /tmp/fxprof-*-*/ 2>/dev/null | grep -q . || cli_fail "dump -o - left its folder behind"

    cli_expect_error "dump-fallback$major" \
        "^fxprof: pid $pid: .*could not write /proc/nonexistent/x.json.gz \(.*\); wrote $TMPDIR/x.json.gz instead" \
        "$FXPROF" dump "$pid" "${A[@]}" -o /proc/nonexistent/x.json.gz
    [[ $CLI_RC -eq 4 ]] || cli_fail "a fallback dump exited $CLI_RC, expected 4"

    "$FXPROF" dump "$pid" "${A[@]}" -o twice1.json.gz >twice1.out 2>&1 &
    first=$!
    cli_run "twice$major" "$FXPROF" dump "$pid" "${A[@]}" -o twice2.json.gz
    wait "$first" || cli_fail "the first of two simultaneous dumps failed: $(cat twice1.out)"
    [[ $CLI_RC -eq 0 ]] || cli_fail "the second of two simultaneous dumps exited $CLI_RC"
    is_gzip_profile twice1.json.gz
    is_gzip_profile twice2.json.gz

    cli_run "stop$major" "$FXPROF" stop "$pid" "${A[@]}" -o stop.json.gz
    [[ $CLI_RC -eq 0 ]] || cli_fail "stop exited $CLI_RC"
    cli_expect_error "stop-again$major" "^fxprof: pid $pid: not running" "$FXPROF" stop "$pid" "${A[@]}"
    [[ $CLI_RC -eq 1 ]] || cli_fail "stop when stopped exited $CLI_RC, expected 1"
    cli_run "status$major" "$FXPROF" status "$pid" "${A[@]}"
    [[ $CLI_RC -eq 0 ]] && grep -q "^pid $pid: stopped" "status$major.out" || cli_fail "status after stop"
    kill -0 "$pid" || cli_fail "the JVM died"
    cli_stop_sleeper
done
echo "$CLI_NAME: OK"
