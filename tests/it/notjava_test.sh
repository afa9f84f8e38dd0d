#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The not-in-Java recovery (issue 26, docs/VALIDATION.md 8.6): java-test/alloc's AllocWorkload
# bench under mode=cpu at 2 ms; the JVM exits 0 without hs_err, fxcheck accepts the profile, and
# notjava_check.py reads main's top-down tree through profiler-cli: few samples left under
# "[AGCT: not in Java]", an allocating *Site method directly under a VM allocation entry, and
# the recovery counted in meta.extra.
# usage: notjava_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
name="it.notjava.jdk$(fx_jdk_major "$1")"
it_init "$name" "$1" FXAGENT_ALLOC_JAR
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"

profile=$FXAGENT_RUN_DIR/notjava.json.gz
it_run notjava "$IT_JDK/bin/java" "-agentpath:$FXAGENT_LIB=mode=cpu,interval=2ms,file=$profile" \
    -cp "$FXAGENT_ALLOC_JAR" fxagent.alloc.AllocWorkload bench 6
[[ $IT_RC -eq 0 ]] || it_fail "java exited $IT_RC"
it_no_hs_err
"$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"
pcli_setup
pcli_load "$profile" || it_fail "profiler-cli could not load $profile"
pcli_thread_json main pcli-%s.json top-down || it_fail "profiler-cli could not read thread main"
python3 "$IT_DIR/notjava_check.py" pcli-top-down.json "$profile" ||
    it_fail "the not-in-Java samples were not recovered (see above)"
echo "$name: OK"
