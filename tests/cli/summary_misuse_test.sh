#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof summary on files that are not profiles: each is refused with one line naming what the
# file is, exit 1, and from its first bytes: a 1 GiB sparse file of zeros, /dev/zero (endless:
# reading to the end would never finish, so a timeout would fail the test), zeros behind gzip,
# a PNG, an empty file, white space, a JSON array, a JSON object that is not a profile, a
# truncated gzip, a directory. And names with control characters (ESC, BEL, a line break, the
# C1 CSI U+009B) in a thread, a function and meta.extra are printed escaped: no byte a
# terminal obeys reaches stdout or stderr.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_summary_misuse

# refused NAME PATTERN FILE: one line matching PATTERN, exit 1, within 60 s.
refused() {
    local name=$1 pattern=$2 file=$3
    cli_expect_error "$name" "^fxprof: summary: .*$pattern" timeout 60 "$FXPROF" summary "$file"
    [[ $CLI_RC -eq 1 ]] || cli_fail "$name: exit $CLI_RC, expected 1"
}

truncate -s 1G zeros.bin
refused zeros "zeros.bin is not a profile: it starts with byte 0x00" zeros.bin
refused devzero "/dev/zero is not a profile: it starts with byte 0x00" /dev/zero
head -c 1000000 /dev/zero | gzip >zeros.gz
refused zerosgz "zeros.gz is not a profile: it starts with byte 0x00 \(inside its gzip\)" zeros.gz
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR' >image.png
refused png "image.png is a PNG image, not a profile" image.png
: >empty.json
refused empty "empty.json is empty, not a profile" empty.json
printf '  \n\t\n' >blank.json
refused blank "blank.json holds only white space" blank.json
echo '[{"meta":{}}]' >array.json
refused array "array.json is a JSON array, not a processed profile" array.json
echo '{"name":"not a profile","version":3}' >plain.json
refused plain "plain.json is not a processed Firefox Profiler profile \(no meta or threads\)" plain.json
gzip -c "$FXCLI_TESTS/summary_profile.json" | head -c 300 >truncated.json.gz
refused truncated "truncated.json.gz: the gzip stream is truncated" truncated.json.gz
mkdir adir
refused dir "adir is a directory, not a profile" adir

# Names with control characters, as JSON escapes (cJSON turns them into raw bytes).
sed -e 's/"name":"main"/"name":"ma\\u001b[2Jin\\u0007"/' \
    -e 's/"com.example.App.hot"/"com.example.App.hot\\u001b]0;pwned\\u0007\\nINJECTED"/' \
    -e 's/"\[AGCT: GC active\]"/"GC\\u009b31m active"/' \
    "$FXCLI_TESTS/summary_profile.json" >evil.json
grep -q 'u001b\[2J' evil.json && grep -q 'INJECTED' evil.json || cli_fail "the evil profile was not made"
cli_run evil "$FXPROF" summary evil.json --thread "$(printf 'ma\e[2Jin\a')"
[[ $CLI_RC -eq 0 ]] || cli_fail "summary of evil.json exited $CLI_RC"
! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' evil.out || cli_fail "a control character reached stdout"
! LC_ALL=C grep -q $'\xc2[\x80-\x9f]' evil.out || cli_fail "a C1 control reached stdout"
! grep -q '^INJECTED' evil.out || cli_fail "a line break in a name started a new output line"
grep -qF 'Thread "ma\x1b[2Jin\x07"' evil.out || cli_fail "the thread name is not escaped as expected"
grep -qF 'com.example.App.hot\x1b]0;pwned\x07\nINJECTED' evil.out || cli_fail "the method name is not escaped"
grep -qF 'GC\xc2\x9b31m active' evil.out || cli_fail "the C1 control in meta.extra is not escaped"
cli_expect_error evilthread 'no thread named .\\x1b' "$FXPROF" summary evil.json --thread "$(printf '\e[31m')"
! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' evilthread.err || cli_fail "a control character reached stderr"
echo "$CLI_NAME: OK"
