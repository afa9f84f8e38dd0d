#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof sources and the agent's sources= on real profiles, one short run (1.5 s) per JDK
# found (recorded with sources=, which the first checks embed; fxprof's runs start again from
# it, as a profile embedded before holds only what the last run embeds): an application in
# app.jar with app-sources.jar beside it and a library lib.jar without one, on a relative class
# path. Checked by sources_check.py: the embedded text equals the file's bytes (the sources
# jar's, a --from folder's, the JDK's src.zip entry's); every frame's line lies inside its file;
# each left-out file is counted and named by its outcome: not found (Lib.java; the JDK's files
# when src.zip is missing, as Debian's JDK 17 without openjdk-17-source), not UTF-8 (a Latin-1
# copy), too large (--max-file), over the total bound (--max-total); a jar without sources and
# a missing src.zip are named. profiler-cli loads every profile written. Misuse is one line
# and leaves the profile as it was; without -o the profile is replaced in place. fxprof open
# --sources serves a copy with the sources, removed afterwards, and leaves FILE as it was.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_sources
[[ -n "${FXAGENT_LIB:-}" && -f "$FXAGENT_LIB" ]] || cli_skip "libfxagent.so is not built"
source "$CLI_DIR/../it/profiler_cli.sh"
pcli_available || cli_skip "profiler-cli is not installed (scripts/deps.sh test)"
CHECK=(python3 "$CLI_DIR/sources_check.py")

mkdir -p src/demo/hot libsrc/demo/lib latin/demo/hot
cat >src/demo/hot/Work.java <<'EOF'
package demo.hot;

import demo.lib.Lib;

/*
 * A workload for fxprof sources: its frames name this file (in app-sources.jar), Lib.java
 * (in lib.jar, which has no sources jar) and JDK files (Integer, String, ArrayList...).
 * This comment makes the file larger than the --max-file bound of the test, 2000 bytes:
 * Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt
 * ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation
 * ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in
 * reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur
 * sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id
 * est laborum. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor
 * incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud
 * exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor
 * in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur
 * sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id
 * est laborum. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor
 * incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud
 * exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor
 * in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur.
 */
public class Work {
    static long spin(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += Lib.mix(i);
        }
        return s;
    }

    static long sort(int n) {
        java.util.List<Integer> l = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add((i * 7919) % n);
        }
        l.sort(null);
        return l.get(n / 2);
    }

    public static void main(String[] args) {
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000L;
        long r = 0;
        while (System.nanoTime() < end) {
            r += spin(20000);
            r += sort(20000);
        }
        System.out.println(r != 42 ? "done" : "");
    }
}
EOF
cat >libsrc/demo/lib/Lib.java <<'EOF'
package demo.lib;

public class Lib {
    public static int mix(int i) {
        return Integer.toString(i).hashCode() * 31 + String.valueOf(i * 3).length();
    }
}
EOF
# The same file in Latin-1: a byte the profiler's strict UTF-8 decoding would refuse.
iconv -f UTF-8 -t ISO-8859-1 <src/demo/hot/Work.java | sed 's/^package demo.hot;/package demo.hot; \/\/ caf\xe9/' \
    >latin/demo/hot/Work.java

# Strict UTF-8 as the profiler decodes it: a NUL byte, an overlong form, a surrogate are "not
# UTF-8"; a byte order mark and a 4-byte character are embedded as they are.
for v in nul overlong surrogate good; do
    mkdir -p "utf8-$v/demo/hot"
done
python3 - <<'PY'
src = open("src/demo/hot/Work.java", "rb").read()
bad = {"nul": b"\x00", "overlong": b"\xc0\xaf", "surrogate": b"\xed\xa0\x80"}
for name, b in bad.items():
    open(f"utf8-{name}/demo/hot/Work.java", "wb").write(src + b"// " + b + b"\n")
open("utf8-good/demo/hot/Work.java", "wb").write(
    b"\xef\xbb\xbf" + src + "// caf\u00e9 \U0001F600 \u4e2d\n".encode())
PY

loaded() {
    pcli_load "$1" >"$1.pcli" 2>&1 || {
        cat "$1.pcli"
        cli_fail "profiler-cli could not load $1"
    }
}

one_jdk() {
    local home=$1 major=$2
    local d=jdk$major
    mkdir -p "$d" && cd "$d"
    "$home/bin/javac" --release 11 -d libcls ../libsrc/demo/lib/Lib.java
    "$home/bin/javac" --release 11 -cp libcls -d cls ../src/demo/hot/Work.java
    "$home/bin/jar" cf lib.jar -C libcls .
    "$home/bin/jar" cf app.jar -C cls .
    "$home/bin/jar" cf app-sources.jar -C ../src .
    # The agent's sources= (issue 34) embeds at the dump: ../src first (a folder), the JDK's
    # src.zip (or, without it, its files counted not found), lib.jar named without sources.
    cli_run rec "$FXPROF" record --agent "$FXAGENT_LIB" -o p.json.gz --options sources=../src -- \
        "$home/bin/java" -cp app.jar:lib.jar demo.hot.Work 1500
    [[ $CLI_RC -eq 0 && -s p.json.gz ]] || cli_fail "JDK $major: record exited $CLI_RC"
    "${CHECK[@]}" p.json.gz embedded=demo/hot/Work.java:../src/demo/hot/Work.java \
        outcome="not found:demo/lib/Lib.java" "entry=jars without a -sources.jar~/lib.jar" \
        "entry=embedded~folders 1" "entry=looked up and read in~ ms" jdk ||
        cli_fail "JDK $major: the agent's sources= (p.json.gz)"
    loaded p.json.gz
    if [[ $major == "${FX_JDK_MAJORS[0]}" ]]; then # refused at start, the path named: one line
        cli_run agentbad "$home/bin/java" "-agentpath:$FXAGENT_LIB=sources=../src:nowhere" -version
        [[ $CLI_RC -ne 0 && $(grep -c '^fxagent: ' agentbad.err) -eq 1 ]] &&
            grep -q "^fxagent: option 'sources': nowhere: No such file or directory (give folders" \
                agentbad.err || cli_fail "JDK $major: sources=nowhere: exit $CLI_RC, $(cat agentbad.err)"
    fi

    # From app-sources.jar beside app.jar (found through the recorded class path), the JDK's.
    cli_run s1 "$FXPROF" sources p.json.gz -o s1.json.gz
    [[ $CLI_RC -eq 0 ]] || cli_fail "JDK $major: sources exited $CLI_RC"
    grep -q '^fxprof: sources: embedded [1-9]' s1.err || cli_fail "JDK $major: no summary line"
    local nf
    nf=$(sed -n 's/^fxprof: sources: embedded.*; not found \([0-9]*\).*/\1/p' s1.err)
    [[ $(grep -c '^fxprof: sources: not found: ' s1.err) -eq $((nf < 5 ? nf : 5)) ]] ||
        cli_fail "JDK $major: stderr does not name the first $nf files not found (at most 5)"
    ((nf <= 5)) || grep -q "^fxprof: sources: $((nf - 5)) more not found" s1.err ||
        cli_fail "JDK $major: stderr does not say how many more were not found"
    "${CHECK[@]}" s1.json.gz embedded=demo/hot/Work.java:../src/demo/hot/Work.java \
        outcome="not found:demo/lib/Lib.java" "entry=jars without a -sources.jar~/lib.jar" \
        "entry=embedded~jars 1" jdk || cli_fail "JDK $major: s1.json.gz"
    loaded s1.json.gz

    # A --from folder comes first; a Latin-1 file there is "not UTF-8", never transcoded.
    cli_run s2 "$FXPROF" sources p.json.gz --from ../latin -o s2.json
    [[ $CLI_RC -eq 0 ]] || cli_fail "JDK $major: sources --from latin exited $CLI_RC"
    "${CHECK[@]}" s2.json "outcome=not UTF-8:demo/hot/Work.java" || cli_fail "JDK $major: s2.json"
    loaded s2.json
    for v in nul overlong surrogate; do
        cli_run "u$v" "$FXPROF" sources p.json.gz --from "../utf8-$v" -o "u$v.json.gz"
        "${CHECK[@]}" "u$v.json.gz" "outcome=not UTF-8:demo/hot/Work.java" >/dev/null ||
            cli_fail "JDK $major: a file with a $v is not counted not UTF-8"
    done
    cli_run ugood "$FXPROF" sources p.json.gz --from ../utf8-good -o ugood.json
    "${CHECK[@]}" ugood.json embedded=demo/hot/Work.java:../utf8-good/demo/hot/Work.java ||
        cli_fail "JDK $major: a BOM and 2-, 3-, 4-byte characters are not embedded as they are"
    loaded ugood.json
    cli_run s3 "$FXPROF" sources p.json.gz --from ../src --from ../libsrc -o s3.json.gz
    "${CHECK[@]}" s3.json.gz embedded=demo/hot/Work.java:../src/demo/hot/Work.java \
        embedded=demo/lib/Lib.java:../libsrc/demo/lib/Lib.java "entry=embedded~folders 2" ||
        cli_fail "JDK $major: s3.json.gz"

    # The bounds: a file over --max-file, files past --max-total.
    cli_run s4 "$FXPROF" sources p.json.gz --max-file 2000 -o s4.json.gz
    "${CHECK[@]}" s4.json.gz "outcome=too large:demo/hot/Work.java" \
        "entry=bound~2000 bytes a file" || cli_fail "JDK $major: s4.json.gz"
    loaded s4.json.gz
    cli_run s5 "$FXPROF" sources p.json.gz --from ../src --max-total 100 -o s5.json.gz
    "${CHECK[@]}" s5.json.gz "outcome=left out (over the total bound):demo/hot/Work.java" \
        "entry=embedded~0 of" || cli_fail "JDK $major: s5.json.gz"

    # Misuse changes nothing; no -o replaces the profile itself, still gzip.
    local before
    before=$(md5sum <p.json.gz)
    cli_expect_error bad1 "nowhere: No such file" "$FXPROF" sources p.json.gz --from nowhere
    cli_expect_error bad2 "not a size" "$FXPROF" sources p.json.gz --max-file 0
    cli_expect_error bad3 "neither a folder nor a jar" "$FXPROF" sources p.json.gz --from rec.out
    [[ $(md5sum <p.json.gz) == "$before" ]] || cli_fail "JDK $major: misuse changed the profile"
    chmod 0640 p.json.gz
    cli_run s6 "$FXPROF" sources p.json.gz
    [[ $(stat -c %a p.json.gz) == 640 ]] || cli_fail "JDK $major: in place: the mode is not kept"
    [[ $CLI_RC -eq 0 && $(head -c 2 p.json.gz | od -An -tx1 | tr -d ' ') == 1f8b ]] ||
        cli_fail "JDK $major: in place: exit $CLI_RC or not gzip"
    "${CHECK[@]}" p.json.gz embedded=demo/hot/Work.java:../src/demo/hot/Work.java ||
        cli_fail "JDK $major: in place"
    [[ $major == "${FX_JDK_MAJORS[0]}" ]] && open_sources
    cd ..
}

# fxprof open --sources: what the server sends has the sources; the temporary copy is removed.
open_sources() {
    local before
    before=$(md5sum <p.json.gz)
    cli_serve open "$FXPROF" open p.json.gz --sources ../src --no-browser --once --timeout 60s
    local pid=$SERVER_PID link=$LINK copy rc=0
    copy=$(sed -n 's/^Serving \(.*\) ([0-9]* bytes.*$/\1/p' open.out)
    [[ -f $copy && $copy != p.json.gz ]] || cli_fail "open --sources serves '$copy', not a copy"
    python3 - "$link" <<'PY' || cli_fail "open --sources: fetching the profile failed"
import http.client, sys, urllib.parse
url = urllib.parse.urlparse(urllib.parse.unquote(sys.argv[1].split("/from-url/")[1].rstrip("/")))
c = http.client.HTTPConnection("127.0.0.1", url.port, timeout=10)
c.request("GET", url.path)
r = c.getresponse()
assert r.status == 200, r.status
open("served.json.gz", "wb").write(r.read())
PY
    "${CHECK[@]}" served.json.gz embedded=demo/hot/Work.java:../src/demo/hot/Work.java ||
        cli_fail "open --sources served no sources"
    wait "$pid" || rc=$?
    [[ $rc -eq 0 ]] || cli_fail "open --sources exited $rc"
    [[ ! -e $copy && ! -e $(dirname "$copy") ]] || cli_fail "open --sources left $copy behind"
    [[ $(md5sum <p.json.gz) == "$before" ]] || cli_fail "open --sources changed FILE"
}

fx_jdks_discover >/dev/null
[[ ${#FX_JDK_HOMES[@]} -gt 0 ]] || cli_skip "no JDK found"
for i in "${!FX_JDK_HOMES[@]}"; do
    one_jdk "${FX_JDK_HOMES[$i]}" "${FX_JDK_MAJORS[$i]}"
done
echo "PASS: it.fxprof_sources on JDK ${FX_JDK_MAJORS[*]}"
