# SPDX-License-Identifier: Apache-2.0
"""One total in every output (issue 30), for a profile fxcheck passed (fxcheck_totals.sh): the
agent's exit line for the file ("wrote N CPU samples ... to FILE", or "... wrote FILE instead
(N CPU samples ...", the last such line in any text file of the run dir), Profile Info's
"Samples in this file" and fxprof summary --json (samples, idle, views) give the same figures,
lock waits and idle waits (waiting for work) apart; the exit line's "(and ... W lock waits, I
idle waits ...)" too; and every meta.extra counter (stack recovery's partial stacks, losses,
...) is in summary --json --all's "extra", in its group, with the same value, and nothing else,
and a line "  GROUP: LABEL: VALUE" of its text.
A file without that group (an older agent, a synthetic profile) has nothing to check; a file
no exit line names (written by a dump whose reply was not kept) is checked without it.
usage: totals_check.py FXPROF PROFILE RUN_DIR   (exit 1 with one line per disagreement)"""
import json
import os
import re
import subprocess
import sys

from profile_lib import extra_entries, extra_groups, load_profile

EXIT = re.compile(r"wrote (\d+) (?:CPU|wall) samples\b(.*?) to (/\S+) \(")
FALLBACK = re.compile(r"wrote (/\S+) instead \((\d+) (?:CPU|wall) samples\b([^\n]*)")


def views_said(text):
    """The exit line's other views: {"lock waits": W, "idle waits": I}, 0 when not named, and
    its "of M threads (T tracks)": {"threads": M, "tracks": T (M when not named)}."""
    said = {k: int(m.group(1)) if (m := re.search(r"(\d+) " + k + r"\b", text)) else 0
            for k in ("lock waits", "idle waits")}
    if m := re.search(r"of (\d+) threads(?: \((\d+) tracks\))?", text):
        said["threads"] = int(m.group(1))
        said["tracks"] = int(m.group(2) or m.group(1))
    return said


def exit_line_count(run_dir, path):
    """(N, its other views) of the last exit line naming path, or None. A line in a log last
    written before the file was (re)placed describes an earlier write of that path (a JVM killed
    while it wrote the file again never says so): None then."""
    found = None
    # The agent's cache folder (it_lib.sh's FXAGENT_CACHE, in the run dir) holds its symbol and
    # unwind tables (~10 MB: kallsyms, libjvm.so's symbols), never an exit line: reading them
    # took ~1 s of CPU a profile, most of this check's cost (it runs for every fxcheck).
    cache = os.path.realpath(os.environ.get("FXAGENT_CACHE") or os.path.join(run_dir, "cache"))
    for root, dirs, files in os.walk(run_dir):
        dirs[:] = [d for d in dirs if os.path.realpath(os.path.join(root, d)) != cache]
        for name in sorted(files):
            f = os.path.join(root, name)
            # regular files only: a run dir may hold /dev/full or /dev/zero (it.misuse's
            # targets), which read forever
            if not os.path.isfile(f) or os.path.islink(f) or \
                    name.endswith((".gz", ".jar", ".so", ".class", ".pb", ".json")) or \
                    os.path.getsize(f) > (8 << 20):
                continue
            try:
                text = open(f, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            fresh = os.path.getmtime(f) >= os.path.getmtime(path)
            for m in EXIT.finditer(text):
                if os.path.realpath(m.group(3)) == path:
                    found = (int(m.group(1)), views_said(m.group(2))) if fresh else None
            for m in FALLBACK.finditer(text):
                if os.path.realpath(m.group(1)) == path:
                    found = (int(m.group(2)), views_said(m.group(3))) if fresh else None
    return found


def escaped(value):
    """As fxprof prints a name (cli.c fx_cli_put_escaped): ASCII controls escaped."""
    names = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
    return "".join(names.get(c, f"\\x{ord(c):02x}") if ord(c) < 0x20 or ord(c) == 0x7f else c
                   for c in str(value))


def main():
    fxprof, profile, run_dir = sys.argv[1:4]
    doc = load_profile(profile)
    info = extra_groups(doc).get("Samples in this file")
    if info is None:
        return 0

    def said(prefix):
        return next((v for k, v in info.items() if k.startswith(prefix)), 0)
    cpu = said("CPU samples") or said("wall samples")
    fails = []
    out = subprocess.run([fxprof, "summary", "--json", "--all", profile], capture_output=True,
                         text=True)
    if out.returncode != 0:
        fails.append(f"fxprof summary --json failed: {out.stderr.strip()}")
    else:
        s = json.loads(out.stdout)
        v = s["views"]
        pairs = [("samples", s["samples"], cpu), ("idle", s["idle"], said("[idle] samples")),
                 ("lock waits", v["lock"]["waits"], said("lock waits")),
                 ("idle waits", v["idlewait"]["waits"], said("idle waits")),
                 ("allocation samples", v["alloc"]["samples"], said("allocation samples"))]
        pairs += [("lock wait time, us", round(v["lock"]["ms"] * 1000), said("lock wait time, us")),
                  ("idle wait time, us", round(v["idlewait"]["ms"] * 1000),
                   said("idle wait time, us"))]
        for label, got, want in pairs:
            tol = 0.5 * said(label[:9] + "s") + 1 if label.endswith("time, us") else 0
            if abs(got - want) > tol:
                fails.append(f"summary --json {label} {got}, Profile Info {want}")
        meta = [(g, e["label"], e["value"]) for g, e in extra_entries(doc)]
        summ = [(e["group"], e["label"], e["value"]) for e in s.get("extra", [])]
        if meta != summ:
            diff = [x for x in meta if x not in summ][:3] + [x for x in summ if x not in meta][:3]
            fails.append(f"summary --json --all's counters differ from meta.extra's "
                         f"({len(summ)} against {len(meta)}): {diff}")
        text = subprocess.run([fxprof, "summary", "--all", profile], capture_output=True,
                              text=True).stdout.splitlines()
        head = "Profile info (meta.extra):"
        lines = set(text[text.index(head) + 1:] if head in text else text)
        unsaid = [f"{g}: {k}: {v}" for g, k, v in meta
                  if f"  {escaped(g)}: {escaped(k)}: {escaped(v)}" not in lines]
        if unsaid:
            fails.append(f"summary --all's text lacks {len(unsaid)} of meta.extra's "
                         f"{len(meta)} counters: {unsaid[:3]}")
    line = exit_line_count(run_dir, os.path.realpath(profile))
    n = line[0] if line else None
    if n is not None and n != cpu:
        fails.append(f"the exit line says {n} samples, Profile Info {cpu}")
    # the file's tracks, and its threads: the tracks that are not a view's own (lock or idle
    # waits, weightType tracing-ms, named after their thread)
    tracks = doc["threads"]
    own = {"tracks": len(tracks),
           "threads": sum((t.get("samples") or {}).get("weightType") != "tracing-ms"
                          for t in tracks)}
    for k, got in (line[1].items() if line else ()):
        if k in own:
            if got != own[k]:
                fails.append(f"the exit line says {got} {k}, the file has {own[k]}")
        elif got != said(k):
            fails.append(f"the exit line says {got} {k}, Profile Info {said(k)}")
    for f in fails:
        print(f"FAIL: totals: {profile}: {f}")
    if not fails:
        print(f"totals: {os.path.basename(profile)}: {cpu:.0f} samples in Profile Info, summary"
              + (f" and the exit line" if n is not None else " (no exit line names it)"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
