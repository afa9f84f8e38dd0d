#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof convert --diff BASE NEW --to collapsed on two profiles built here with known stacks:
# a profile against itself gives nothing (and --all every stack with equal counts); BASE
# against NEW gives exactly the expected "stack BASE NEW" lines (merged over threads, [idle]
# and allocation samples left out, sorted); misuse is one line and leaves no file.
# fxprof compare A B: serves both files under their own secret paths, prints the Firefox
# Profiler's /compare/ link holding the two from-url views, each with its thread (--thread NAME,
# else the first selected, else 0; each fetched here from the decoded link), serves nothing
# else, and with --once ends when both were fetched.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_diff

python3 - <<'PY'
import gzip, json
def profile(main, worker):
    strings = ["App.main", "App.hot", "App.cold", "[idle]", "App.alloc"]
    return {
      "meta": {"interval": 1, "startTime": 0, "product": "diff test",
               "preprocessedProfileVersion": 66},
      "shared": {
        "stringArray": strings,
        "funcTable": {"name": [0, 1, 2, 3, 4], "length": 5},
        "frameTable": {"func": [0, 1, 2, 3, 4], "length": 5},
        # 0 main, 1 main;hot, 2 main;cold, 3 [idle], 4 main;alloc
        "stackTable": {"frame": [0, 1, 2, 3, 4], "prefixOffset": [0, 1, 2, 0, 4], "length": 5},
        "sources": {"filename": [], "length": 0}},
      "threads": [
        {"name": "main", "samples": {"stack": main, "weight": None, "weightType": "samples",
                                     "length": len(main)}},
        {"name": "worker", "samples": {"stack": worker, "weight": None,
                                       "weightType": "samples", "length": len(worker)}},
        {"name": "alloc", "samples": {"stack": [4], "weight": [4096], "weightType": "bytes",
                                      "length": 1}}]}
# base: hot 3+1, cold 2, main 1, idle 2; new: hot 5+1, cold 2, main 0, idle 7, no stack 1
open("base.json", "w").write(json.dumps(profile([1, 1, 1, 2, 2, 0, 3, 3], [1])))
open("new.json.gz", "wb").write(gzip.compress(json.dumps(
    profile([1, 1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 3, None], [1])).encode()))
PY

cli_run self "$FXPROF" convert --diff base.json base.json --to collapsed -o self.collapsed
[[ $CLI_RC -eq 0 ]] || cli_fail "diff of a profile with itself exited $CLI_RC"
[[ -f self.collapsed && ! -s self.collapsed ]] || cli_fail "the diff of a profile with itself is not empty"
grep -q '0 of 3 stacks differ' self.err || cli_fail "the self diff does not say 0 of 3 stacks differ"
cli_run selfall "$FXPROF" convert --diff base.json base.json --to collapsed -o - --all
cat >expected.all <<'EOF'
App.main 1 1
App.main;App.cold 2 2
App.main;App.hot 4 4
EOF
diff -u expected.all selfall.out || cli_fail "--all of a profile with itself differs"

cli_run ab "$FXPROF" convert base.json --diff new.json.gz --to collapsed
[[ $CLI_RC -eq 0 ]] || cli_fail "diff base new exited $CLI_RC"
cat >expected.diff <<'EOF'
App.main 1 0
App.main;App.hot 4 6
[no stack] 0 1
EOF
diff -u expected.diff new.diff.collapsed || cli_fail "the diff of base and new differs from the expected lines"
grep -q 'samples: base 7, new 9$' ab.err || cli_fail "the totals line is wrong"
grep -q '2 \[idle\] samples left out' ab.err && grep -q '7 \[idle\] samples left out' ab.err ||
    cli_fail "the [idle] samples left out of each side are not said"
cli_run abidle "$FXPROF" convert --diff base.json new.json.gz --to collapsed --idle -o -
grep -qx '\[idle\] 2 7' abidle.out || cli_fail "--idle does not keep the [idle] samples"

cli_expect_error bad1 "two profiles" "$FXPROF" convert --diff base.json --to collapsed -o x
cli_expect_error bad2 "collapsed only" "$FXPROF" convert --diff base.json new.json.gz --to pprof -o x
cli_expect_error bad3 "nothere.json" "$FXPROF" convert --diff base.json nothere.json --to collapsed -o x
[[ ! -e x ]] || cli_fail "a failed diff left its output behind"

# ---- compare ----
cli_serve cmp "$FXPROF" compare base.json new.json.gz --no-browser --once --timeout 60s
pid=$SERVER_PID link=$LINK
grep -q '^Open the comparison in the Firefox Profiler: ' cmp.out || cli_fail "compare's link line is not the comparison's"
echo "$CLI_NAME: link $link"
python3 - "$link" <<'PY' || cli_fail "the comparison link or what it serves is wrong (see above)"
import gzip, http.client, json, re, sys, urllib.parse
link = sys.argv[1]
u = urllib.parse.urlparse(link)
assert link.startswith("https://profiler.firefox.com/compare/?"), link
q = urllib.parse.parse_qs(u.query)
views = q["profiles[]"]
assert len(views) == 2, views
paths = []
for v, want in zip(views, ["base.json", "new.json.gz"]):
    # A compared view names its thread (merge-compare.ts refuses one without): here the
    # files have no initialSelectedThreads, so thread 0.
    m = re.fullmatch(r"https://profiler\.firefox\.com/from-url/([^/]+)/calltree/\?thread=0", v)
    assert m, v
    url = urllib.parse.urlparse(urllib.parse.unquote(m.group(1)))
    assert url.hostname == "127.0.0.1", url
    c = http.client.HTTPConnection("127.0.0.1", url.port, timeout=10)
    c.request("GET", url.path, headers={"Origin": "https://profiler.firefox.com"})
    r = c.getresponse()
    body = r.read()
    assert r.status == 200, (v, r.status)
    assert r.getheader("Access-Control-Allow-Origin") == "*", r.getheaders()
    assert body == open(want, "rb").read(), f"{v} does not serve {want}"
    paths.append(url.path)
    port = url.port
assert paths[0] != paths[1], paths
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
c.request("GET", paths[0].rsplit("/", 2)[0] + "/other.json")
assert c.getresponse().status == 404
print("compare: both profiles served, anything else 404")
PY
rc=0
for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$pid" 2>/dev/null && { kill "$pid"; cli_fail "compare --once still runs after both fetches"; }
wait "$pid" || rc=$?
cat cmp.err
[[ $rc -eq 0 ]] || cli_fail "compare exited $rc"
grep -q 'both profiles were fetched' cmp.err || cli_fail "compare does not say both were fetched"
cli_expect_error bad4 "expected two files" "$FXPROF" compare base.json --no-browser
cli_expect_error bad5 "has no thread named 'nope'" "$FXPROF" compare base.json new.json.gz --thread nope --no-browser
cli_expect_error bad6 "--thread is compare's option" "$FXPROF" open base.json --thread main --no-browser
cli_serve thr "$FXPROF" compare base.json new.json.gz --thread worker --no-browser --timeout 60s
kill -INT "$SERVER_PID"
wait "$SERVER_PID" || true
[[ $(grep -o 'thread%3D1' thr.out | wc -l) -eq 2 ]] || cli_fail "--thread worker does not select thread 1 in both views"
cli_serve src "$FXPROF" compare base.json new.json.gz --sources . --no-browser --timeout 60s
kill -INT "$SERVER_PID"
wait "$SERVER_PID" || true
[[ $(grep -c '^Serving .*/fxprof-sources-.*/profile.json.gz' src.out) -eq 2 ]] ||
    cli_fail "compare --sources does not serve two copies"
! ls -d "${TMPDIR:-/tmp}"/fxprof-sources-* 2>/dev/null | grep -qf <(sed -n 's|^Serving \(.*\)/profile.json.gz.*|\1|p' src.out) ||
    cli_fail "compare --sources left its copies behind"
echo "PASS: it.fxprof_diff"
