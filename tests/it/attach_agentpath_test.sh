#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A JVM started WITH -agentpath, driven by jcmd: two dumps (valid, the hot method shown, loaded
# by profiler-cli); a copy of the library at another path finds the running agent and forwards
# to it (its dump is written by the running agent, its start is refused as already running);
# at exit the last file is written; exit 0, no hs_err.
# usage: attach_agentpath_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.attach_agentpath.jdk$(fx_jdk_major "$1")" "$1"
source "$IT_DIR/profiler_cli.sh"
source "$IT_DIR/attach_lib.sh"
run=$FXAGENT_RUN_DIR

srv_start srv "-agentpath:$FXAGENT_LIB=interval=10ms,file=$run/ap-%n.json.gz"
wait_samples 60
expect_ok dump "sampling goes on"
[[ $(reply_path) == "$run/ap-1.json.gz" ]] || it_fail "dump 1 went to '$(reply_path)'"
check_profile "$run/ap-1.json.gz" pcli >/dev/null
wait_samples 120
expect_ok "dump,file=$run/explicit.json.gz"
[[ $(reply_path) == "$run/explicit.json.gz" ]] || it_fail "dump,file= went to '$(reply_path)'"
check_profile "$run/explicit.json.gz" >/dev/null

mkdir -p "$run/copy"
cp "$FXAGENT_LIB" "$run/copy/libfxagent-copy.so"
AG_LIB=$run/copy/libfxagent-copy.so
expect_ok dump "sampling goes on"
[[ $(reply_path) == "$run/ap-3.json.gz" ]] || it_fail "the copy's dump went to '$(reply_path)'"
check_profile "$run/ap-3.json.gz" >/dev/null
expect_error 2 start "already running"
AG_LIB=
expect_ok status "running for"

srv_finish
check_profile "$run/ap-4.json.gz" >/dev/null
echo "$IT_NAME: OK"
