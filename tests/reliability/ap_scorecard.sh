#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# style.ap_scorecard: docs/VALIDATION.md section 9's scorecard of async-profiler's stack tests
# (issue 32) cannot rot. Each row between "<!-- ap-scorecard begin -->" and "<!-- ap-scorecard
# end -->" names, in its third column, the fxagent test that covers the case (`it.NAME`, one
# per JDK, registered by fx_it_test in tests/it/*.cmake) or says "not covered: why"; its fourth
# column names the file that holds the check (`tests/it/...`) and, in a second code span, a
# text of that file which must still be there (the check's own line). A row that names a test
# must name both; a renamed test, a moved file or a deleted check fails this test.
#   ap_scorecard.sh ROOT
set -uo pipefail
root=$1
cd "$root" || exit 1
doc=docs/VALIDATION.md
fail=0
say() {
    echo "style: FAIL: $*"
    fail=1
}
mapfile -t rows < <(sed -n '/<!-- ap-scorecard begin -->/,/<!-- ap-scorecard end -->/p' "$doc" |
    grep '^| ' | tail -n +3)
[[ ${#rows[@]} -ge 20 ]] || say "$doc: ${#rows[@]} scorecard rows (async-profiler's 22 cases expected)"
covered=0
for row in "${rows[@]}"; do
    IFS='|' read -r _ aptest _ ours where _ <<<"$row"
    aptest=$(sed 's/^ *//; s/ *$//' <<<"$aptest")
    if [[ $ours =~ not\ covered ]]; then
        continue
    fi
    name=$(grep -o '`it\.[a-z_0-9]*`' <<<"$ours" | head -1 | tr -d '`')
    if [[ -z $name ]]; then
        say "$doc: row '$aptest' names no fxagent test (\`it.NAME\`) nor says 'not covered'"
        continue
    fi
    grep -qF "fx_it_test($name.jdk" tests/it/*.cmake ||
        say "$doc: row '$aptest': $name is not registered in tests/it/*.cmake"
    mapfile -t spans < <(grep -o '`[^`]*`' <<<"$where" | tr -d '`')
    if [[ ${#spans[@]} -lt 2 ]]; then
        say "$doc: row '$aptest': the check column needs \`FILE\` and \`TEXT\`"
        continue
    fi
    file=${spans[0]} text=${spans[1]}
    if [[ ! -f $file ]]; then
        say "$doc: row '$aptest': $file does not exist"
    elif ! grep -qF -- "$text" "$file"; then
        say "$doc: row '$aptest': '$text' is not in $file"
    else
        covered=$((covered + 1))
    fi
done
echo "style: ap_scorecard: ${#rows[@]} rows, $covered with a check found"
exit $fail
