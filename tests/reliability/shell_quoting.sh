#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# style.shell_quoting: shellcheck's word-splitting and quoting checks over every shell script
# git tracks (or would track): the files ending in .sh and those whose first line is a sh or
# bash shebang (.ci/run). The tests run from a checkout whose path may hold spaces (and from
# /tmp); an unquoted "$dir" there is a test that fails on one machine only. The other
# shellcheck checks are left to the author: these are the ones about paths. Nothing is changed.
# Exit 77 (skip) without shellcheck (Debian package shellcheck), except under CI=true.
#   shell_quoting.sh ROOT
set -uo pipefail
root=$1
cd "$root" || exit 1
# SC2086 SC2046 SC2048 SC2068: unquoted variable, command substitution, $*/$@, array;
# SC2206 SC2207 SC2124 SC2128 SC2145: arrays split from or joined into strings;
# SC2089 SC2090 SC2294: quotes kept in a string and expected to group words later;
# SC2027 SC2140: quotes that end a quoted word instead of nesting;
# SC2053 SC2295: a variable used as a pattern where a string was meant;
# SC2231 SC2044 SC2045 SC2066: loops over globs, find or ls output, or one quoted word;
# SC2223 SC2115 SC2035: a default, rm -rf or a glob that a path can turn into something else.
codes=SC2086,SC2046,SC2048,SC2068,SC2206,SC2207,SC2124,SC2128,SC2145,SC2089,SC2090,SC2294
codes+=,SC2027,SC2140,SC2053,SC2295,SC2231,SC2044,SC2045,SC2066,SC2223,SC2115,SC2035
sc=$(command -v shellcheck)
if [ -z "$sc" ]; then
    [ "${CI:-}" = true ] && { echo "style: FAIL: shellcheck not installed (CI=true)"; exit 1; }
    echo "style: SKIP: shellcheck not installed (apt-get install shellcheck)"
    exit 77
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t all < <(git ls-files --cached --others --exclude-standard | sort -u)
else
    mapfile -t all < <(find . \( -path './build*' -o -path ./.git \) -prune -o -type f -print |
        sed 's|^\./||' | sort)
fi
files=()
shebang='^#!.*[/ ](ba)?sh( |$)'
for f in "${all[@]}"; do
    [ -f "$f" ] || continue # git may list a file deleted in the work tree
    # the first line read by the shell itself: a head and a grep per file were 800 processes,
    # over a minute of this test on a loaded 2-core machine
    first=
    [[ $f == *.sh ]] || IFS= read -r first <"$f" 2>/dev/null || true
    if [[ $f == *.sh || $first =~ $shebang ]]; then
        files+=("$f")
    fi
done
echo "style: $("$sc" --version | sed -n 's/^version: /shellcheck /p'): ${#files[@]} scripts checked"
[ ${#files[@]} -gt 0 ] || { echo "style: FAIL: no shell script found under $root"; exit 1; }
# -x -P SCRIPTDIR: sourced helpers (cli_lib.sh, it_lib.sh) are read as the scripts use them.
"$sc" -x -P SCRIPTDIR -f gcc -i "$codes" -- "${files[@]}" && exit 0
echo "style: FAIL: unquoted expansions above; quote them (\"\$x\", \"\${a[@]}\") or build an array"
exit 1
