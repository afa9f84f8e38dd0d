#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# style.core_private: the headers in core/ (the model's layout, the writer's internals) are
# private to the core. Only core/ itself and the core's own tests (tests/unit, tests/fuzz, by
# their ../../core/PART/ path) include them; everyone else goes through include/ (ARCHITECTURE.md).
#   core_private.sh ROOT
set -uo pipefail
root=$1
cd "$root" || exit 1
names=()
for h in core/*/*.h; do
    [ -f "$h" ] && names+=("$(basename "$h")")
done
if [ "${#names[@]}" -eq 0 ]; then
    echo "style: FAIL: no header in core/ (did they move back to include/?)"
    exit 1
fi
alt=$(printf '%s|' "${names[@]}")
pat="^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]([^\">]*/)?(${alt%|})[\">]"
mapfile -t files < <(find agent cli bench include tests -name '*.[ch]' -not -path 'tests/unit/*' \
    -not -path 'tests/fuzz/*' 2>/dev/null | sort)
hits=$(grep -nE "$pat" "${files[@]}" /dev/null)
echo "style: ${#files[@]} files outside the core checked for ${#names[@]} private native headers"
if [ -n "$hits" ]; then
    echo "$hits"
    echo "style: FAIL: a file outside core/ includes a header private to core/"
    exit 1
fi
