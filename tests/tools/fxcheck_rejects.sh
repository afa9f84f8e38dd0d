#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest unit.fxcheck_rejects: fxcheck must reject every file in bad/ naming the rule listed in
# bad/expected.txt, reject multi-member gzip and trailing bytes after a gzip member, and accept
# good/min.json both plain and as a single gzip member, and good/min-us.json (µs CPU deltas).
# usage: fxcheck_rejects.sh FXCHECK TOOLS_SOURCE_DIR
set -u
fxcheck=$1
dir=$2
tmp=$(mktemp -d -t fxcheck-rejects.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect_reject FILE RULE
expect_reject() {
    local out rc
    out=$("$fxcheck" "$1" 2>&1)
    rc=$?
    if [ "$rc" -ne 1 ]; then
        echo "FAIL: $1: exit $rc (want 1)"; echo "$out"; fails=$((fails + 1)); return
    fi
    if ! grep -q -- ": $2: " <<<"$out"; then
        echo "FAIL: $1: rule '$2' not reported"; echo "$out"; fails=$((fails + 1)); return
    fi
    echo "ok: $(basename "$1") rejected: $(grep -m1 -- ": $2: " <<<"$out")"
}

expect_pass() {
    local out rc
    out=$("$fxcheck" "$1" 2>&1)
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q "^fxcheck: OK " <<<"$out"; then
        echo "FAIL: $1: should pass (exit $rc)"; echo "$out"; fails=$((fails + 1)); return
    fi
    echo "ok: $out"
}

n=0
while read -r file rule; do
    case "$file" in '' | '#'*) continue ;; esac
    expect_reject "$dir/bad/$file" "$rule"
    n=$((n + 1))
done <"$dir/bad/expected.txt"
if [ "$n" -lt 30 ]; then
    echo "FAIL: only $n cases in bad/expected.txt"; fails=$((fails + 1))
fi

good=$dir/good/min.json
expect_pass "$good"
expect_pass "$dir/good/min-us.json" # CPU deltas in µs (U+00B5), as fxagent writes them
gzip -c "$good" >"$tmp/single.json.gz"
expect_pass "$tmp/single.json.gz"

# Two members whose concatenated contents are valid JSON: Node's gunzip (and profiler-cli)
# would accept this, browsers would not (PROFILE-FORMAT.md §15).
size=$(wc -c <"$good")
head -c $((size / 2)) "$good" >"$tmp/a"
tail -c +$((size / 2 + 1)) "$good" >"$tmp/b"
gzip -c "$tmp/a" >"$tmp/multi.json.gz"
gzip -c "$tmp/b" >>"$tmp/multi.json.gz"
expect_reject "$tmp/multi.json.gz" multi-member-gzip
cp "$tmp/single.json.gz" "$tmp/trailing.json.gz"
printf '\0\0\0\0' >>"$tmp/trailing.json.gz"
expect_reject "$tmp/trailing.json.gz" multi-member-gzip
head -c $(($(wc -c <"$tmp/single.json.gz") - 9)) "$tmp/single.json.gz" >"$tmp/truncated.json.gz"
expect_reject "$tmp/truncated.json.gz" gzip

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "all $((n + 5)) fxcheck cases behave"
