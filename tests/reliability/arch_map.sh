#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# style.arch_map: docs/ARCHITECTURE.md's "Files" section names exactly the C files and headers on
# disk in every part's folder (agent/PART/, core/PART/, cli/, include/; agent/testdata/ holds a
# test fixture and is left out): a file added, removed or renamed without the map fails here,
# naming it, and so does a part's folder the map does not list.
#   arch_map.sh ROOT
set -uo pipefail
root=$1
cd "$root" || exit 1
map=docs/ARCHITECTURE.md
[ -f "$map" ] || { echo "style: FAIL: $map is missing"; exit 1; }
# "- `DIR/`: `a.c` `b.h` ..." with continuation lines, as "DIR FILE" pairs
listed=$(awk '/^## Files/ {on=1; next} /^## / {on=0}
    on && /^- `[^`]+\/`:/ { dir=$2; gsub(/[`:]/, "", dir) }
    on && dir != "" { n = split($0, w, "`"); for (i = 2; i <= n; i += 2) if (w[i] ~ /^[A-Za-z0-9_]+\.[ch]$/) print dir, w[i] }' "$map" | sort -u)
[ -n "$listed" ] || { echo "style: FAIL: $map has no \"## Files\" section in the expected form"; exit 1; }
ondisk=$(for d in agent/*/ core/*/ cli/ include/; do
    [ "$d" = agent/testdata/ ] && continue
    for f in "$d"*.c "$d"*.h; do
        [ -e "$f" ] && echo "$d $(basename "$f")"
    done
done | sort -u)
fail=0
while read -r d f; do
    [ -n "$f" ] && { echo "style: FAIL: $d$f is on disk but not in $map's Files"; fail=1; }
done < <(comm -13 <(printf '%s\n' "$listed") <(printf '%s\n' "$ondisk"))
while read -r d f; do
    [ -n "$f" ] && { echo "style: FAIL: $map names $d$f, which is not on disk"; fail=1; }
done < <(comm -23 <(printf '%s\n' "$listed") <(printf '%s\n' "$ondisk"))
echo "style: $(printf '%s\n' "$listed" | wc -l) files in the map, $(printf '%s\n' "$ondisk" | wc -l) on disk"
[ "$fail" -eq 0 ] && echo "style: the map's files are the files on disk"
exit "$fail"
