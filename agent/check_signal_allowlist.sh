#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fails if an object file references a symbol that is not on the signal-path allow-list. The
# objects given are the signal path together (the handler and the recovery rules it calls):
# a symbol one of them defines is allowed to the others, as it is held to the same list.
# usage: check_signal_allowlist.sh NM ALLOWLIST OBJECT...
set -u
nm=$1 allow=$2
shift 2
[ $# -gt 0 ] || { echo "no object files given" >&2; exit 2; }
allowed=$(sed -e 's/#.*//' "$allow" | tr -s ' \t' '\n\n' | grep -v '^$' | sort -u)
defined=$("$nm" --defined-only "$@" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDBR]$/ { print $3 }')
allowed=$(printf '%s\n%s\n' "$allowed" "$defined" | grep -v '^$' | sort -u)
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
