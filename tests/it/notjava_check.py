#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The not-in-Java recovery of issue 26, read through profiler-cli (tests/it/notjava_test.sh).
Owns the reading of thread "main"'s top-down tree (profiler-cli thread samples-top-down --json)
of java-test/alloc's AllocWorkload bench in cpu mode:
  share    the samples under "[AGCT: not in Java]" whose next frame is a compiled method's runtime
           call (Runtime1::, OptoRuntime::) are at most MAX_PCT % of the thread's samples
           that are not "[idle]" (before the recovery: 16-18 % at 10 ms on JDK 17 and 25);
  method   at least one sample has an AllocWorkload *Site method directly below a VM allocation
           entry (Runtime1::new_type_array, OptoRuntime::new_array*, InterpreterRuntime::newarray,
           ...allocate...): the allocating Java method under its recovered native frames;
  counter  meta.extra's "recovered: not in Java, ..." counter of the profile is > 0;
  stops    issue 30: no "[truncated]" (nothing reaches depth=); each recovered walk that ended
           early has its reason as the root ("[walk stopped: ...]"), as many as meta.extra's
           counters of those reasons;
  whole    issue 32: at least one recovered stack (a "Recovered" frame on it) has the
           thread's first Java frame, AllocWorkload.main, as its first Java frame: the walk named the Site's interpreted
           callers and crossed to the first entry frame (before: cut at the interpreted caller)
  idle     the profile has "[idle]" gap samples (a GC thread waits between collections), each
           of weight 0: they end the activity graph at the gap but count for nothing in the
           call tree (with weight 1 they were 44-48 % of main's and the GC threads' samples).
usage: notjava_check.py TOP_DOWN.json PROFILE.json.gz"""
import re
import sys

from profile_lib import Checker, Profile, extra_entries, load_json

MAX_PCT = 3.0  # of the samples: compiled code's runtime calls left under the label
COMPILED_CALL = re.compile(r"^(Runtime1|OptoRuntime)::")
NOT_JAVA = "[AGCT: not in Java]"
SITE = re.compile(r"(^|\.)fxagent\.alloc\.AllocWorkload\.\w+Site$")
MAIN = re.compile(r"(^|\.)fxagent\.alloc\.AllocWorkload\.main$")
VM_ALLOC = re.compile(r"^(Runtime1::new_\w+|OptoRuntime::new_\w+|InterpreterRuntime::\w*new\w*)\(")


def idle_weights(prof):
    """The weights of the profile's samples whose leaf is "[idle]"."""
    frames = {f for f, n in enumerate(prof.name) if n == "[idle]"}
    stacks = {i for i, f in enumerate(prof.doc["shared"]["stackTable"]["frame"]) if f in frames}
    out = []
    for t in prof.threads():
        s = t["samples"]
        w = s.get("weight") or [1] * s["length"]
        out += [w[i] for i, st in enumerate(s["stack"]) if st in stacks]
    return out


def main():
    tree = load_json(sys.argv[1])["regularCallTree"]
    prof = Profile(sys.argv[2])
    total = tree["totalSamples"] - sum(c["totalSamples"] for c in tree["children"]
                                       if c["name"] == "[idle]")
    not_java, with_site, compiled_left = 0, 0, 0
    stack = [(tree, False)]
    while stack:
        n, under = stack.pop()
        if n["name"] == NOT_JAVA:
            not_java += n["totalSamples"]
            compiled_left += sum(c["totalSamples"] for c in n.get("children", [])
                                 if COMPILED_CALL.search(c["name"]))
            continue
        for c in n.get("children", []):
            if SITE.search(n["name"]) and VM_ALLOC.search(c["name"]):
                with_site += c["totalSamples"]
            stack.append((c, under))
    counter = sum(e.get("value", 0) for _, e in extra_entries(prof.doc)
                  if str(e.get("label", "")).startswith("recovered: not in Java"))
    # What stays under the label is mostly interpreted code (InterpreterRuntime::newarray: no
    # recovery for interpreted frames), whose share grows when the JIT is late (a loaded
    # machine); compiled code's runtime calls are what the recovery must take.
    pct = 100.0 * compiled_left / total if total else 100.0
    print(f"notjava_check: {total} samples, {not_java} under {NOT_JAVA}, {compiled_left} "
          f"({pct:.1f} %) of them in a compiled method's runtime call (Runtime1/OptoRuntime), "
          f"{with_site} with an allocating site under a VM allocation entry, counter {counter}")
    idle = idle_weights(prof)
    print(f"notjava_check: {len(idle)} [idle] samples, weights {sorted(set(idle))}")
    ck = Checker()
    ck.check(idle and not any(idle), "no [idle] sample, or one that weighs more than 0")
    ck.check(total >= 50, f"only {total} samples")
    ck.check(pct <= MAX_PCT, f"{pct:.1f} % of the samples are a compiled method's runtime call "
             f"left under {NOT_JAVA} (at most {MAX_PCT} %)")
    ck.check(with_site != 0, "no AllocWorkload *Site frame directly under a VM allocation entry")
    ck.check(counter > 0, "meta.extra counts no not-in-Java recovery")
    check_stops(prof, ck)
    return ck.exit_code()


def check_stops(prof, ck):
    """Issue 30 item 3: "[truncated]" only at the depth; a walk's early end named."""
    truncated = stopped = whole = 0
    for t in prof.threads():
        s = t["samples"]
        w = s.get("weight") or [1] * s["length"]
        for st, wt in zip(s["stack"], w):
            path = prof.path(st)
            names = [prof.name[f] for f in path]
            truncated += wt if "[truncated]" in names else 0
            stopped += 1 if names and names[0].startswith("[walk stopped: ") else 0
            # Java frames by category: the native ones below main now (issue 32's walk below
            # recovered stacks) may hold a dot too ("[clone .constprop.1]")
            java = [prof.name[f] for f in path if prof.cat[f] == "Java"]
            recovered = any(prof.sub[f].startswith("Recovered") for f in path)
            whole += 1 if recovered and java and MAIN.search(java[0]) else 0
    counted = sum(e.get("value", 0) for _, e in extra_entries(prof.doc)
                  if str(e.get("label", "")).startswith("[walk stopped: "))
    print(f"notjava_check: {truncated} [truncated], {stopped} stacks rooted at a walk stop, "
          f"meta.extra counts {counted}")
    ck.check(truncated == 0, f"{truncated} samples '[truncated]' below the depth")
    ck.check(stopped == counted,
             f"{stopped} stacks rooted at '[walk stopped: ...]', meta.extra counts {counted}")
    print(f"notjava_check: {whole} recovered stacks whose first Java frame is AllocWorkload.main")
    ck.check(whole > 0, "no recovered stack reaches AllocWorkload.main (the thread's first Java "
             "frame): the walk stops at interpreted callers or the call stub")


if __name__ == "__main__":
    sys.exit(main())
