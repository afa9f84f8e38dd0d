#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A backend stand-in for push= tests (issue 33): an HTTP server on 127.0.0.1 that records
every POST (req-N.json: path, query, headers; req-N.body: the body) and answers 200, or 503 to
the first --refuse requests. Writes its port to PORT_FILE once listening.
usage: push_receiver.py DIR PORT_FILE [--refuse N]"""
import http.server, json, os, sys, threading

out, port_file = sys.argv[1], sys.argv[2]
refuse = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--refuse" else 0
lock = threading.Lock()
state = {"n": 0}

class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with lock:
            state["n"] += 1
            i = state["n"]
        code = 503 if i <= refuse else 200
        with open(os.path.join(out, f"req-{i}.body"), "wb") as f:
            f.write(body)
        with open(os.path.join(out, f"req-{i}.json"), "w") as f:
            json.dump({"path": self.path, "status": code, "headers": dict(self.headers)}, f)
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass

srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(port_file + ".tmp", port_file)
srv.serve_forever()
