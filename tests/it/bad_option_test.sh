#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A bad option stops the JVM at start-up with one clear line and nothing else:
# `interval=banana` must make java exit non-zero, print exactly one stderr line starting with
# "fxagent: " that names 'interval', write no profile and leave no hs_err file.
# usage: bad_option_test.sh JDK_HOME
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.bad_option.jdk$(fx_jdk_major "$1")" "$1"

it_java bad "interval=banana" 1
[[ $IT_RC -ne 0 ]] || it_fail "java exited 0 with interval=banana"
n=$(grep -c '^fxagent: ' bad.err || true)
[[ $n -eq 1 ]] || it_fail "expected exactly 1 stderr line starting with 'fxagent: ', got $n"
line=$(grep '^fxagent: ' bad.err)
[[ $line == *interval* ]] || it_fail "the fxagent line does not name 'interval': $line"
if grep -q 'fxagent demo:' bad.out; then
    it_fail "the demo ran although the agent refused its options"
fi
profiles=$(find . -name '*.json.gz' -o -name '*.json')
[[ -z $profiles ]] || it_fail "a refused start wrote files: $profiles"
it_no_hs_err
echo "$IT_NAME: OK: $line"
