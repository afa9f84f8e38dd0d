#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# style.clang_format: `clang-format --dry-run -Werror` with the repository's .clang-format on
# every C file under core/ include/ agent/ tests/ bench/ cli/ that git tracks or would track
# (untracked files count unless .gitignore excludes them; without git, every file found).
# Nothing is reformatted. Exit 77 (skip) without clang-format, except under CI=true.
#   clang_format.sh ROOT
set -uo pipefail
root=$1
cd "$root" || exit 1
dirs=(core include agent tests bench cli)
fmt=$(command -v clang-format || command -v clang-format-14)
if [ -z "$fmt" ]; then
    [ "${CI:-}" = true ] && { echo "style: FAIL: clang-format not installed (CI=true)"; exit 1; }
    echo "style: SKIP: clang-format not installed"
    exit 77
fi
existing=()
for d in "${dirs[@]}"; do
    [ -d "$d" ] && existing+=("$d")
done
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files --cached --others --exclude-standard -- "${existing[@]}" |
        grep -E '\.[ch]$' | sort -u)
else
    mapfile -t files < <(find "${existing[@]}" -name '*.[ch]' -type f | sort)
fi
present=()
for f in "${files[@]}"; do
    [ -f "$f" ] && present+=("$f") # git may list a file deleted in the work tree
done
echo "style: $("$fmt" --version | head -1): ${#present[@]} files checked"
[ ${#present[@]} -gt 0 ] || exit 0
# One run for all files; each violation is reported as FILE:LINE:COL: error: ...
out=$("$fmt" --style=file --dry-run -Werror "${present[@]}" 2>&1)
rc=$?
[ "$rc" -eq 0 ] && exit 0
mapfile -t bad < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: (error|warning): code should be clang-formatted' \
    <<<"$out" | cut -d: -f1 | sort -u)
printf 'style: not formatted: %s\n' "${bad[@]}"
if [ ${#bad[@]} -eq 0 ]; then
    echo "$out" | head -n 20
else
    echo "style: first differences in ${bad[0]}:"
    grep -A2 -m 5 "^${bad[0]}:" <<<"$out"
fi
echo "style: FAIL: ${#bad[@]} file(s) differ from clang-format; fix with: clang-format -i FILE"
exit 1
