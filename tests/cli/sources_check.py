# SPDX-License-Identifier: Apache-2.0
"""Checks a profile written by `fxprof sources` (tests/cli/sources_test.sh).

usage: sources_check.py PROFILE EXPECT...   where each EXPECT is one of
  embedded=NAME:PATH        NAME's content equals the bytes of the file PATH
  embedded-zip=NAME:ZIP     NAME's content equals the bytes of ZIP's entry */NAME or NAME
  outcome=LABEL:NAME        meta.extra Sources "LABEL: files" names NAME, and "LABEL" counts >= 1
  null=NAME                 NAME has no content
  entry=LABEL~TEXT          the Sources entry LABEL contains TEXT
  jdk                       every JDK file (java/, javax/, jdk/, sun/) of the profile is embedded,
                            equal to its src.zip entry; or, without src.zip, named "not found"
and always: every frame's line lies inside its file's embedded text (1..number of lines).
"""
import gzip
import json
import os
import sys
import zipfile


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data.decode("utf-8"))


def fail(msg):
    print("sources_check: " + msg, file=sys.stderr)
    sys.exit(1)


p = load(sys.argv[1])
sh = p["shared"]
strings = sh["stringArray"]
src = sh["sources"]
content = {strings[src["filename"][i]]: src["content"][i] for i in range(src["length"])}
groups = {g["label"]: {e["label"]: e["value"] for e in g["entries"]} for g in p["meta"]["extra"]}
sources = groups.get("Sources")
if sources is None:
    fail("no meta.extra Sources group")
jvm = groups.get("JVM", {})


def zip_entry(zpath, name):
    with zipfile.ZipFile(zpath) as z:
        for n in z.namelist():
            if n == name or n.split("/", 1)[-1] == name:
                return z.read(n)
    return None


def same(name, want):
    got = content.get(name)
    if got is None:
        fail(f"{name} has no content")
    if got.encode("utf-8") != want:
        fail(f"{name}'s content differs from the file's bytes")


for exp in sys.argv[2:]:
    kind, _, arg = exp.partition("=")
    if kind == "embedded":
        name, path = arg.split(":", 1)
        same(name, open(path, "rb").read())
    elif kind == "embedded-zip":
        name, zpath = arg.split(":", 1)
        same(name, zip_entry(zpath, name))
    elif kind == "outcome":
        label, name = arg.split(":", 1)
        if not sources.get(label):
            fail(f"Sources has no count '{label}': {sources}")
        if name not in sources.get(label + ": files", "").split(", "):
            fail(f"Sources '{label}: files' does not name {name}: {sources}")
        if content.get(name) is not None:
            fail(f"{name} is {label} but has content")
    elif kind == "null":
        if content.get(arg) is not None:
            fail(f"{arg} has content")
    elif kind == "entry":
        label, text = arg.split("~", 1)
        if text not in str(sources.get(label)):
            fail(f"Sources '{label}' is {sources.get(label)!r}, expected to contain {text!r}")
    elif kind == "jdk":
        zpath = os.path.join(jvm["java.home"], "lib", "src.zip")
        jdk = [n for n in content if n.split("/")[0] in ("java", "javax", "jdk", "sun")]
        if not jdk:
            fail("the profile names no JDK file")
        if os.path.exists(zpath):
            for n in jdk:
                same(n, zip_entry(zpath, n))
            print(f"sources_check: {len(jdk)} JDK files equal their src.zip entries")
        else:
            if sources.get("JDK src.zip") != "missing: " + zpath:
                fail(f"Sources does not say src.zip is missing: {sources}")
            nf = sources.get("not found: files", "")
            for n in jdk[:20]:
                if n not in nf and "more" not in nf:
                    fail(f"{n} is not named not found: {nf}")
            print(f"sources_check: src.zip missing, {len(jdk)} JDK files not found")
    else:
        fail("unknown expectation " + exp)

# Lines of frames fall inside their files.
ft, fn = sh["frameTable"], sh["funcTable"]
checked = 0
for i in range(ft["length"]):
    s, line = fn["source"][ft["func"][i]], ft["line"][i]
    if s is None or line is None or src["content"][s] is None:
        continue
    n = len(src["content"][s].split("\n"))
    if not 1 <= line <= n:
        fail(f"frame {i} line {line} is outside {strings[src['filename'][s]]} ({n} lines)")
    checked += 1
print(f"sources_check: {checked} frame lines inside their files; Sources: {sources}")
