#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# CTest unit.signal_path_allowlist: the signal-path objects pass the allow-list check, and the
# check itself can fail: a fixture object that calls malloc and snprintf must be rejected,
# naming both symbols.
# usage: test_signal_allowlist.sh NM ALLOWLIST BAD_OBJECT SIGNAL_OBJECT...
set -u
here=$(dirname "$0")
nm=$1 allow=$2 bad=$3
shift 3
if ! sh "$here/check_signal_allowlist.sh" "$nm" "$allow" "$@"; then
    echo "FAIL: the signal path calls something outside the allow-list"
    exit 1
fi
out=$(sh "$here/check_signal_allowlist.sh" "$nm" "$allow" "$bad")
if [ $? -eq 0 ]; then
    echo "FAIL: the checker accepted $bad, which calls malloc"
    exit 1
fi
for sym in malloc snprintf; do
    if ! printf '%s\n' "$out" | grep -q "'$sym'"; then
        echo "FAIL: the checker did not name '$sym' in: $out"
        exit 1
    fi
done
echo "PASS: signal path within the allow-list; a malloc-calling object is rejected"
