# SPDX-License-Identifier: Apache-2.0
"""What every checker of tests/it shares: reading a profile fxagent wrote (Firefox Profiler
processed format, docs PROFILE-FORMAT.md) and the saved replies of fxcheck and profiler-cli,
and one harness of counted failures with one exit status.

  load_json(path), load_profile(path)   a JSON file; a profile, gzip'd or not
  Profile(path or doc)                  the decoded shared tables: per frame its function name,
                                        category and subcategory names, line, isJS, library;
                                        per stack its frames root first (paths) or leaf first;
                                        threads and markers by name, meta.extra by group
  thread_name(thread)                   a thread's name without the track name's " (tid N)"
  extra_groups(doc), extra_entries(doc) meta.extra as {group: {label: value}} or (group, entry)
  counter_values(counter)               a counter's absolute values
  fx_total, pcli_total, idle_samples,   a method's samples in fxcheck --summary-json and in
  workload_split                        profiler-cli's replies; the split a workload printed
  run_dir_args(default_label)           [--label NAME] RUN_DIR: the directory, a verbose Checker
  Checker(label, verbose)               check(ok, msg) / fail(msg) / fatal(msg) count failures,
                                        print each ("LABEL: FAIL: msg"), write(path, result),
                                        exit_code(): the number of failures, capped at 100
"""
import argparse
import gzip
import json
import os
import re
import sys


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_profile(path):
    """A profile, gzip'd or not (told by its first bytes, not its name)."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open if gz else open)(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def extra_groups(doc):
    """meta.extra as {group label: {entry label: value}}."""
    return {g["label"]: {e["label"]: e["value"] for e in g["entries"]}
            for g in doc["meta"].get("extra") or []}


def extra_entries(doc):
    """(group label, entry) of every meta.extra entry, in order."""
    for g in doc["meta"].get("extra") or []:
        for e in g.get("entries", []):
            yield g.get("label", ""), e


# A track name the writer told apart from another thread's of the same name (ff_writer_names.c)
# also inside a view's track name, "NAME (tid N): lock waits" (issue 30: named after its thread)
TRACK_SUFFIX = re.compile(r" \(tid -?\d+(, #\d+)?\)(?=(: (lock|idle) waits)?$)")


def thread_name(thread):
    """A thread's own name: its track name without the " (tid N)" that tells repeats apart."""
    return TRACK_SUFFIX.sub("", thread["name"])


def counter_values(counter):
    """Absolute values: line-accumulated counts are deltas after the first."""
    total, out = 0, []
    for c in counter["samples"]["count"]:
        total += c
        out.append(total)
    return out


class Profile:
    """One profile's shared tables decoded once: frame f's func name (name[f]), category and
    subcategory names (cat[f], sub[f]; "" when the frame has none), line[f], is_js[f]; stack s
    as frame ids root first (paths[s], built on first use)."""

    def __init__(self, source):
        self.doc = load_profile(source) if isinstance(source, str) else source
        sh = self.doc["shared"]
        self.strings = sh["stringArray"]
        ft, fu = sh["frameTable"], sh["funcTable"]
        self.cats = self.doc["meta"]["categories"]
        self.name = [self.strings[fu["name"][f]] for f in ft["func"]]
        self.is_js = [bool(fu["isJS"][f]) for f in ft["func"]]
        self.line = list(ft.get("line") or [None] * len(ft["func"]))
        self.cat = [self.cats[c]["name"] if c is not None else "" for c in ft["category"]]
        self.sub = []
        for c, s in zip(ft["category"], ft["subcategory"]):
            subs = self.cats[c]["subcategories"] if c is not None else []
            self.sub.append(subs[s] if s is not None and 0 <= s < len(subs) else "")
        self._paths = None
        self._lib = None

    @property
    def paths(self):
        if self._paths is None:
            st = self.doc["shared"]["stackTable"]
            self._paths = []  # prefixOffset 0: a root; else the parent is s - offset
            for i, (frame, off) in enumerate(zip(st["frame"], st["prefixOffset"])):
                self._paths.append((self._paths[i - off] if off else ()) + (frame,))
        return self._paths

    @property
    def lib(self):
        """The library of each frame: libs[resourceTable.lib] of its func's resource whose name
        is that library's, else None."""
        if self._lib is None:
            sh, libs = self.doc["shared"], self.doc["libs"]
            fu, rt = sh["funcTable"], sh["resourceTable"]
            self._lib = []
            for f in sh["frameTable"]["func"]:
                r = fu["resource"][f]
                ok = r is not None and r >= 0 and rt["type"][r] == 1 and rt["lib"][r] is not None
                lib = libs[rt["lib"][r]] if ok else None
                named = lib and lib["name"] == self.strings[rt["name"][r]]
                self._lib.append(lib if named else None)
        return self._lib

    def path(self, stack):
        """Frame ids of a stack, root first; () for no stack."""
        return self.paths[stack] if stack is not None else ()

    def names(self, stack):
        """Function names of a stack, root first."""
        return [self.name[f] for f in self.path(stack)]

    def leaf_first(self, stack):
        """Function names of a stack, leaf first."""
        return self.names(stack)[::-1]

    def threads(self, name=None):
        """The threads named name (their track names told apart or not), or all."""
        return [t for t in self.doc["threads"] if name is None or thread_name(t) == name]

    def stacks(self, thread=None):
        """Every sample's path (root first), of the threads named thread or of all."""
        for t in self.threads(thread):
            for s in t["samples"]["stack"]:
                yield self.path(s)

    def markers(self, thread, name=None, data_type=None):
        """A thread's markers as dicts (name, start, end, phase, data), those named name and/or
        whose data has type data_type."""
        m = thread["markers"]
        out = []
        for i in range(m["length"]):
            d = m["data"][i]
            if name is not None and self.strings[m["name"][i]] != name:
                continue
            if data_type is not None and not (d and d.get("type") == data_type):
                continue
            out.append({"name": self.strings[m["name"][i]], "start": m["startTime"][i],
                        "end": m["endTime"][i], "phase": m["phase"][i], "data": d})
        return out

    def extra(self, group):
        """One meta.extra group as {label: value}, None when the profile has no such group."""
        for g in self.doc["meta"].get("extra") or []:
            if g["label"] == group:
                return {e["label"]: e["value"] for e in g["entries"]}
        return None

    def counters(self):
        """{counter name: absolute values}."""
        return {c["name"]: counter_values(c) for c in self.doc.get("counters", [])}


def fx_total(funcs, pattern):
    """Samples whose stack holds a func matching pattern, from fxcheck --summary-json's funcs
    (summed over the matching funcs)."""
    return sum(f["total"] for f in funcs if re.search(pattern, f["name"]))


def pcli_total(functions, pattern):
    """The same from the "functions" list of profiler-cli thread functions --json."""
    return sum(f["totalSamples"] for f in functions if re.search(pattern, f["name"]))


def idle_samples(samples_json):
    """Samples in the Idle category, from profiler-cli thread samples --json."""
    for c in samples_json["categoryBreakdown"]["categories"]:
        if c["name"] == "Idle":
            return c["samples"]
    return 0


def workload_split(run, name, regex):
    """The percentages the workload printed about itself (regex's groups in run/name, a file of
    its stdout), as floats; None when the file or the line is missing."""
    try:
        with open(os.path.join(run, name), encoding="utf-8") as f:
            m = re.search(regex, f.read())
    except OSError:
        return None
    return [float(x) for x in m.groups()] if m else None


def run_dir_args(default_label):
    """The arguments of a checker of one run directory: [--label NAME] RUN_DIR. Returns the
    directory and a verbose Checker labelled NAME."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default=default_label)
    ap.add_argument("run")
    a = ap.parse_args()
    return a.run, Checker(a.label, verbose=True)


class Checker:
    """Counted failures: each failed check prints "LABEL: FAIL: msg" (verbose: each passed one
    "LABEL: ok: msg" too); the exit status is the number of failures, capped at 100."""

    def __init__(self, label="", verbose=False):
        self.label = label
        self.prefix = f"{label}: " if label else ""
        self.verbose = verbose
        self.failures = []

    def check(self, ok, msg):
        if not ok:
            self.failures.append(msg)
            print(f"{self.prefix}FAIL: {msg}", flush=True)
        elif self.verbose:
            print(f"{self.prefix}ok: {msg}")
        return bool(ok)

    def fail(self, msg):
        return self.check(False, msg)

    def fatal(self, msg):
        """A failure after which nothing else can be checked: exits now."""
        self.fail(msg)
        sys.exit(self.exit_code())

    def exit_code(self):
        return min(len(self.failures), 100)

    def write(self, path, result):
        """Writes result with the failures to path; returns the exit status."""
        result["failures"] = self.failures
        with open(path, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        return self.exit_code()
