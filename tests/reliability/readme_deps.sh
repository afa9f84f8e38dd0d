#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# style.readme_deps: scripts/deps.sh holds the one package list; the lists people read are
# checked against it (issue 30: README lacked libdw-dev and golang-go, so a manual install then
# failed at configure):
#  1. README.md's first `apt-get install` line is `deps.sh --list demo`, its second the packages
#     `--list test` adds, in deps.sh's order, and its `npm install -g` the npm package deps.sh
#     installs;
#  2. docs/SETUP.md's package table names each of those packages once, in the right profile
#     (demo or test), and nothing else.
#   readme_deps.sh ROOT
set -uo pipefail
root=$1
cd "$root" || exit 1
fail=0
say() {
    echo "style: FAIL: $*"
    fail=1
}
demo=$(bash scripts/deps.sh --list demo) || say "scripts/deps.sh --list demo failed"
all=$(bash scripts/deps.sh --list test) || say "scripts/deps.sh --list test failed"
test_only=${all#"$demo "}
[[ $test_only != "$all" ]] || say "deps.sh --list test does not start with the demo list"
npm=$(sed -n 's/^FX_DEPS_NPM=\(.*\)$/\1/p' scripts/deps.sh)
[[ -n $npm ]] || say "no FX_DEPS_NPM= line in scripts/deps.sh"

mapfile -t apt < <(sed -n 's/^apt-get install --no-install-recommends //p' README.md)
if [[ ${#apt[@]} -ne 2 ]]; then
    say "README.md has ${#apt[@]} 'apt-get install --no-install-recommends' lines, expected 2"
else
    [[ ${apt[0]} == "$demo" ]] ||
        say "README.md's demo list '${apt[0]}' is not deps.sh --list demo: '$demo'"
    [[ ${apt[1]} == "$test_only" ]] ||
        say "README.md's test list '${apt[1]}' is not what deps.sh --list test adds: '$test_only'"
fi
grep -qxF "npm install -g $npm" README.md || say "README.md does not say 'npm install -g $npm'"

# SETUP.md: "| `a`, `b` | demo | why |" rows; the npm row is "| `pkg@ver` (npm) | test | ... |".
declare -A row
while IFS='|' read -r _ names profile _; do
    profile=${profile//[[:space:]]/}
    for n in $(grep -o '`[^`]*`' <<<"$names" | tr -d '`'); do
        [[ -z ${row[$n]:-} ]] || say "docs/SETUP.md names $n twice"
        row[$n]=$profile
    done
done < <(grep -E '^\| `' docs/SETUP.md)
want() { # PACKAGE PROFILE
    if [[ -z ${row[$1]:-} ]]; then
        say "docs/SETUP.md's package table lacks $1 ($2)"
    elif [[ ${row[$1]} != "$2" ]]; then
        say "docs/SETUP.md lists $1 under ${row[$1]}, deps.sh under $2"
    fi
    unset "row[$1]"
}
for p in $demo; do want "$p" demo; done
for p in $test_only; do want "$p" test; done
want "$npm" test
for p in "${!row[@]}"; do say "docs/SETUP.md lists $p, which scripts/deps.sh does not install"; done

n_demo=$(wc -w <<<"$demo") n_test=$(wc -w <<<"$test_only")
echo "style: README.md and docs/SETUP.md checked against scripts/deps.sh: $n_demo demo and $n_test test packages, npm $npm"
exit "$fail"
