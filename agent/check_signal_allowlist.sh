#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fails if an object file references a symbol that is not on the signal-path allow-list.
# usage: check_signal_allowlist.sh NM ALLOWLIST OBJECT...
set -u
nm=$1 allow=$2
shift 2
[ $# -gt 0 ] || { echo "no object files given" >&2; exit 2; }
allowed=$(sed -e 's/#.*//' "$allow" | tr -s ' \t' '\n\n' | grep -v '^$' | sort -u)
status=0
for obj in "$@"; do
    syms=$("$nm" -u "$obj") || { echo "$obj: nm failed" >&2; exit 2; }
    for s in $(printf '%s\n' "$syms" | awk 'NF { print $NF }'); do
        s=${s%%@*}
        if ! printf '%s\n' "$allowed" | grep -qxF -- "$s"; then
            echo "$obj: '$s' is not on the signal-path allow-list ($allow)"
            status=1
        fi
    done
done
exit $status
