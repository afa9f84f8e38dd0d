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
# A second run (FXAGENT_TEST_CODEHEAP_ONLY=1, issue 32) keeps every compiled method out of the
# code table: the same checks (but the interpreted count), and tests/it/codeheap_check.py: the
# walks found pcs in the code heaps, and the lookup agreed with every CompiledMethodLoad it
# checked (none differing); and (issue 31, FXAGENT_TEST_NMETHOD_SCOPES=1: every load) the
# inlining facts decoded from each nmethod's own scopes agreed with the event's records at least
# 50 times, never differing.
# Fails on a build that compares no recovered stack (no such class in the report), on one
# whose anchor walk stops at interpreted frames (no walk names one), and on one whose walks do
# not look compiled methods up in the code heaps.
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
# Issue 32: the same with no compiled method in the code table (a test switch): every compiled
# frame of the anchor walks and recoveries is found in HotSpot's code heaps (codeheap_sig.c)
# and still held to GetStackTrace; each CompiledMethodLoad checked the lookup against itself.
VA_REPORT=$FXAGENT_RUN_DIR/validate-heap.json
VA_PROFILE=$FXAGENT_RUN_DIR/profile-heap.json.gz
FXAGENT_TEST_CODEHEAP_ONLY=1 FXAGENT_TEST_NMETHOD_SCOPES=1 va_java bigalloc-heap $((seconds + 120)) "BigAlloc: 2 threads" \
    -Xmx256m fxagent.test.BigAlloc "$seconds" 2
va_check --min-compared 20 --min-anchor-walks 20 --min-anchor-whole 20
python3 "$IT_DIR/codeheap_check.py" "$VA_PROFILE" --label "$IT_NAME" --min-scopes-agree 50 ||
    it_fail "the code heap lookup or the nmethod scopes' decode was not used, or differed from CompiledMethodLoad (above)"
echo "$IT_NAME: OK"
