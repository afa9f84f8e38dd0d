#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest it.validate_stress.jdk<major>: validate mode on AllocStress (8 threads allocating through
# varied stacks) for SECONDS (default 12). No crash (exit 0, no hs_err), no hang (CTest's
# timeout, and the JVM must finish within SECONDS + 120 s here), a valid report, no mismatch
# outside the HotSpot patterns documented in docs/VALIDATION.md (every mismatch is printed), and
# a profile that passes fxcheck. Three more threads link call sites from C1-compiled code, so the
# run has mismatches of pattern 4.8 (cut_at_vm_upcall: 2-8 a run here), each re-derived from its
# frames by the checker; how many is left to chance (no minimum: a rate, not a known answer).
# Environment: FXAGENT_VALIDATE_JAR (fxagent-validate.jar) besides it_lib.sh's.
# usage: validate_stress_test.sh JDK_HOME [SECONDS]
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
# shellcheck source=tests/it/validate_lib.sh
source "$(dirname "$0")/validate_lib.sh"
seconds=${2:-12}
va_init it.validate_stress "$1"
# and three linker threads (docs/VALIDATION.md 4.8): call sites linked from C1 code, its method
# compiled before it runs on (a per-method option; the other code compiles as usual)
va_java stress $((seconds + 120)) "AllocStress: 8 threads" -XX:CompileCommand=quiet \
    "-XX:CompileCommand=BackgroundCompilation,fxagent.test.UpcallTemplate*::work,false" \
    fxagent.test.AllocStress "$seconds" 8 3
va_check --min-compared 50
echo "$IT_NAME: OK"
