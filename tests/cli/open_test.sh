#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fxprof open serves a gzip profile to the from-url loader and then exits:
#   the printed profiler.firefox.com link decodes to http://127.0.0.1:PORT/<32 hex>/profile.json;
#   a wrong path, a malformed request and a wrong method are refused, and only the secret path
#   carries CORS headers; a preflight gets 204 echoing the requested headers;
#   GET returns the file's bytes with Content-Encoding: gzip, application/json and CORS *;
#   with --once the server exits 0 by itself after that; a plain 8 MiB .json file is sent whole,
#   without Content-Encoding; without --once the server keeps serving after a fetch (a reload 4 s
#   later gets the file again) until Ctrl-C, which then ends it with 0.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
cli_init it.fxprof_open

python3 - <<'PY'
import gzip, json
import os
profile = {"meta": {"preprocessedProfileVersion": 66, "interval": 1}, "threads": [],
           "text": "x" * 5000}
data = json.dumps(profile).encode()
open("small.json.gz", "wb").write(gzip.compress(data))
# 8 MiB that does not compress: the plain answer takes many partial sends.
profile["text"] = os.urandom(4 << 20).hex()
open("small.json", "wb").write(json.dumps(profile).encode())
PY

# serve FILE LOG: starts fxprof open in the background; sets SERVER_PID and LINK.
serve() {
    # The background job opens its own redirections: the log exists before the first read only
    # if it is made here (CI read it first once: "sed: can't read gz.out").
    : >"$2.out"
    "$FXPROF" open "$1" --no-browser --timeout 120s "${@:3}" >"$2.out" 2>"$2.err" &
    SERVER_PID=$!
    for _ in $(seq 1 300); do
        LINK=$(sed -n 's/^Open in the Firefox Profiler: //p' "$2.out")
        [[ -n $LINK ]] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || cli_fail "fxprof open exited: $(cat "$2.err")"
        sleep 0.1
    done
    cli_fail "fxprof open printed no link within 30 s"
}

# wait_exit LOG: the server must exit 0 on its own within 30 s.
wait_exit() {
    for _ in $(seq 1 300); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$SERVER_PID" 2>/dev/null && { kill "$SERVER_PID"; cli_fail "$1: still running 30 s after serving"; }
    local rc=0
    wait "$SERVER_PID" || rc=$?
    sed "s/^/    $1: /" "$1.out" "$1.err"
    [[ $rc -eq 0 ]] || cli_fail "$1: fxprof open exited $rc after serving"
    grep -q 'the profile was fetched' "$1.err" || cli_fail "$1: no 'fetched' line on stderr"
}

serve small.json.gz gz --once
echo "$CLI_NAME: link $LINK"
python3 - "$LINK" small.json.gz gzip <<'PY' || cli_fail "the gzip server's answers are wrong (see above)"
import http.client, re, socket, sys, urllib.parse
link, path, encoding = sys.argv[1], sys.argv[2], sys.argv[3]
prefix = "https://profiler.firefox.com/from-url/"
assert link.startswith(prefix) and link.endswith("/"), link
url = urllib.parse.unquote(link[len(prefix):-1])
m = re.fullmatch(r"http://127\.0\.0\.1:(\d+)(/[0-9a-f]{32}/profile\.json)", url)
assert m, f"decoded URL {url!r} is not http://127.0.0.1:PORT/<32 hex>/profile.json"
assert urllib.parse.quote(url, safe="-_.!~*'()") == link[len(prefix):-1], "not encodeURIComponent"
port, secret = int(m.group(1)), m.group(2)

def request(method, target, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, target, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    print(f"  {method} {target} -> {r.status} {dict(r.getheaders())}")
    return r, body

def raw(data):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(data)
    reply = b""
    while chunk := s.recv(65536):
        reply += chunk
    s.close()
    print(f"  raw {data[:30]!r} -> {reply.splitlines()[0]!r}")
    return reply

ok = True
def check(cond, what):
    global ok
    if not cond:
        print("  WRONG:", what)
        ok = False

for target in ["/", "/profile.json", "/" + "0" * 32 + "/profile.json", secret + "x"]:
    r, _ = request("GET", target)
    check(r.status == 404, f"GET {target}: status {r.status}, expected 404")
    check(r.getheader("Access-Control-Allow-Origin") is None, f"GET {target}: CORS header on 404")
r, _ = request("OPTIONS", "/elsewhere", {"Access-Control-Request-Method": "GET"})
check(r.status == 404 and r.getheader("Access-Control-Allow-Origin") is None, "OPTIONS elsewhere")
reply = raw(b"GARBAGE\r\n\r\n")
check(reply.startswith(b"HTTP/1.1 400 ") and b"Access-Control" not in reply, "malformed request")
reply = raw(b"GET " + secret.encode() + b" HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n")
check(reply.startswith(b"HTTP/1.1 431 "), "oversized head")
r, _ = request("DELETE", secret)
check(r.status == 405 and r.getheader("Allow") == "GET, HEAD, OPTIONS", "DELETE on the secret path")
r, body = request("OPTIONS", secret, {"Origin": "https://profiler.firefox.com",
                                      "Access-Control-Request-Method": "GET",
                                      "Access-Control-Request-Headers": "x-requested-with, range"})
check(r.status == 204 and body == b"", f"preflight status {r.status}")
check(r.getheader("Access-Control-Allow-Origin") == "*", "preflight: no CORS *")
check("GET" in (r.getheader("Access-Control-Allow-Methods") or ""), "preflight: methods")
check(r.getheader("Access-Control-Allow-Headers") == "x-requested-with, range",
      "preflight: Allow-Headers does not echo the request")
r, body = request("HEAD", secret)
check(r.status == 200 and body == b"", "HEAD")
expected = open(path, "rb").read()
r, body = request("GET", secret, {"Origin": "https://profiler.firefox.com",
                                  "Accept-Encoding": "gzip"})
check(r.status == 200, f"GET status {r.status}")
check(body == expected, f"GET body: {len(body)} bytes, file has {len(expected)}")
check(r.getheader("Content-Type") == "application/json", "Content-Type")
check(r.getheader("Access-Control-Allow-Origin") == "*", "GET: no CORS *")
check(r.getheader("Content-Encoding") == (encoding or None),
      f"Content-Encoding {r.getheader('Content-Encoding')!r}, expected {encoding!r}")
sys.exit(0 if ok else 1)
PY
wait_exit gz

serve small.json plain --once
python3 - "$LINK" small.json "" <<'PY' || cli_fail "the plain server's answer is wrong"
import http.client, sys, urllib.parse
link, path = sys.argv[1], sys.argv[2]
url = urllib.parse.urlsplit(urllib.parse.unquote(link[len("https://profiler.firefox.com/from-url/"):-1]))
c = http.client.HTTPConnection("127.0.0.1", url.port, timeout=10)
c.request("GET", url.path)
r = c.getresponse()
body = r.read()
print(f"  GET -> {r.status} {dict(r.getheaders())}")
assert r.status == 200 and body == open(path, "rb").read(), "body"
assert r.getheader("Content-Encoding") is None, "Content-Encoding on a plain file"
assert r.getheader("Access-Control-Allow-Origin") == "*", "CORS"
PY
wait_exit plain

# Without --once: a reload after the old 3 s grace period still gets the profile.
serve small.json.gz reload
fetch() {
    python3 - "$LINK" small.json.gz <<'PY'
import http.client, sys, urllib.parse
link, path = sys.argv[1], sys.argv[2]
url = urllib.parse.urlsplit(urllib.parse.unquote(link[len("https://profiler.firefox.com/from-url/"):-1]))
c = http.client.HTTPConnection("127.0.0.1", url.port, timeout=10)
c.request("GET", url.path)
r = c.getresponse()
assert r.status == 200 and r.read() == open(path, "rb").read(), "body"
PY
}
fetch || cli_fail "the first fetch failed"
sleep 4
kill -0 "$SERVER_PID" 2>/dev/null || cli_fail "fxprof open exited after the first fetch: a reload cannot work"
fetch || cli_fail "a reload 4 s after the first fetch failed"
kill -INT "$SERVER_PID"
rc=0
wait "$SERVER_PID" || rc=$?
sed "s/^/    reload: /" reload.out reload.err
[[ $rc -eq 0 ]] || cli_fail "Ctrl-C after a fetch: exit $rc, expected 0"
grep -q 'still serving it for a reload' reload.err || cli_fail "no 'still serving' line"
echo "$CLI_NAME: OK"
