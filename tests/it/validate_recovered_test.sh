#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest it.validate_recovered.jdk<major>: validate mode checks the stack recoveries too
# (docs/VALIDATION.md 5.1). java-test/validate/fxagent/test/BigAlloc.java keeps 2 threads in the
# JVM's large-array allocation path, where a stopped thread's AsyncGetCallTrace mostly fails;
# the anchor walk of the not-in-Java recovery (agent/sampling/recover_anchor.c) is done beside
# ASGCT on each stopped thread and compared with GetStackTrace. Fails unless the report has the
# "recovered" and "anchor_walk_beside_asgct" classes, at least 20 anchor walks were compared and
# none disagreed (each disagreement printed), at least 20 of them named interpreted frames
# (issue 32: BigAlloc's callers stay interpreted; each such frame must be GetStackTrace's
# exactly) and at least 20 ended at the thread's first entry frame, their last frame JVMTI's
# bottom one (the call-stub rule), the JVM ended within SECONDS + 120 s, and the usual checks
# of validate_check.py pass.
# Fails on a build that compares no recovered stack (no such class in the report), and on one
# whose anchor walk stops at interpreted frames (no walk names one).
# Environment: FXAGENT_VALIDATE_JAR (fxagent-validate.jar) besides it_lib.sh's.
# usage: validate_recovered_test.sh JDK_HOME [SECONDS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
# shellcheck source=tests/it/validate_lib.sh
source "$(dirname "$0")/validate_lib.sh"
seconds=${2:-6}
va_init it.validate_recovered "$1"
va_java bigalloc $((seconds + 120)) "BigAlloc: 2 threads" -Xmx256m fxagent.test.BigAlloc \
    "$seconds" 2
va_check --min-compared 20 --min-anchor-walks 20 --min-anchor-interpreted 20 \
    --min-anchor-whole 20
echo "$IT_NAME: OK"
