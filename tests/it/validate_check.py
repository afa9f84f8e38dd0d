#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a validate-mode report (agent option validate=REPORT.json) and prints its figures.

Fails (exit 1) if the report does not parse, has fewer than --min-compared stacks compared,
or has a mismatch that is not one of the HotSpot patterns documented in docs/VALIDATION.md
(sections 4.2 and 4.3; the report names them in "known_pattern"). Every mismatch is printed, so
a test log shows all of them. With --profile, the profile's meta.extra must hold the same
figures in its "validate" group.
"""
import argparse
import json

from profile_lib import Checker, load_json, load_profile


def fail(label, msg):
    Checker(label).fatal(msg)


def rows(m):
    """The frames of a mismatch side by side, '>>' where they differ, top first."""
    a, g = m["asgct"], m["jvmti"]
    out = []
    for i in range(max(len(a), len(g))):
        x = a[i] if i < len(a) else "-"
        y = g[i] if i < len(g) else "-"
        out.append(f"  {'  ' if x == y else '>>'} {i:4d}  {x:<70} {y}")
    return out


def method(frame):
    return frame.rsplit("@", 1)[0]


def top_compiled_frame(a, g):
    """docs/VALIDATION.md 4.2: equal from the bottom up to a point, then the same method."""
    i, k = len(a) - 1, len(g) - 1
    while i >= 0 and k >= 0 and a[i] == g[k]:
        i, k = i - 1, k - 1
    return i >= 0 and k >= 0 and method(a[i]) == method(g[k])


def lost_recursive_frame(a, g):
    """docs/VALIDATION.md 4.3: one JVMTI frame missing, the same as the frame above it."""
    if len(a) != len(g) - 1:
        return False
    k = 0
    while k < len(a) and a[k] == g[k]:
        k += 1
    return k > 0 and a[k:] == g[k + 1:] and g[k - 1] == g[k]


def recheck_pattern(label, m):
    """The agent's classification, redone here from the frame names when both stacks are whole
    (names cannot tell overloads apart, so this is the looser of the two checks)."""
    a, g = m["asgct"], m["jvmti"]
    if len(a) != m["asgct_num_frames"] or len(g) != m["jvmti_frames"]:
        return
    mine = ("top_compiled_frame" if top_compiled_frame(a, g)
            else "lost_recursive_frame" if lost_recursive_frame(a, g) else None)
    if m["known_pattern"] is not None and mine != m["known_pattern"]:
        fail(label, f"the agent calls a mismatch on {m['thread']} '{m['known_pattern']}', "
             f"its frames say '{mine}'")


def show_mismatches(label, r):
    for n, m in enumerate(r["mismatch_list"]):
        pattern = m["known_pattern"] or "UNEXPLAINED"
        print(f"{label}: mismatch {n + 1} on {m['thread']}: pattern {pattern}, first difference "
              f"at frame {m['first_difference']}, ASGCT {m['asgct_num_frames']} frames, "
              f"GetStackTrace {m['jvmti_frames']}")
        print(f"       {'#':>4}  {'AsyncGetCallTrace':<70} GetStackTrace")
        for line in rows(m):
            print(f"{label}: {line}")
    if r["mismatches_not_listed"]:
        print(f"{label}: {r['mismatches_not_listed']} more mismatches not listed in the report")


def check_profile(label, path, r):
    profile = load_profile(path)
    groups = [e for e in profile["meta"].get("extra", []) if e.get("label") == "validate"]
    if len(groups) != 1:
        fail(label, f"{path}: no single 'validate' group in meta.extra")
    entries = {e["label"]: e["value"] for e in groups[0]["entries"]}
    for key, label_in_profile in (("compared", "stacks compared"), ("exact", "exact"),
                                  ("below_top", "agreeing below the top frame"),
                                  ("mismatches", "mismatches")):
        if entries.get(label_in_profile) != r[key]:
            fail(label, f"meta.extra validate '{label_in_profile}' = "
                 f"{entries.get(label_in_profile)}, report {key} = {r[key]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--label", default="validate")
    ap.add_argument("--min-compared", type=int, default=50)
    ap.add_argument("--profile")
    args = ap.parse_args()
    label = args.label
    try:
        r = load_json(args.report)
    except (OSError, ValueError) as e:
        fail(label, f"the report {args.report} does not parse: {e}")
    compared, exact, below = r["compared"], r["exact"], r["below_top"]
    known, unexplained = r["mismatches_known_pattern"], r["mismatches_by_pattern"]["unexplained"]
    jvm = r["jvm"]
    print(f"{label}: JVM {jvm['java.vm.name']} {jvm['java.vm.version']} ({jvm['java.vm.vendor']})")
    print(f"{label}: {r['steps']} steps, {compared} stacks compared, {exact} exact, {below} "
          f"agreeing below the top frame, {r['mismatches']} mismatches "
          f"({json.dumps(r['mismatches_by_pattern'])}), {r['skipped_by_code']} skipped by ASGCT "
          f"code ({json.dumps({k: v for k, v in r['skipped_by_code_detail'].items() if v})}), "
          f"{r['skipped_other_total']} skipped otherwise "
          f"({json.dumps({k: v for k, v in r['skipped_other'].items() if v})})")
    if compared:
        print(f"{label}: exact rate {100.0 * exact / compared:.2f} %, agreement below the top "
              f"frame {100.0 * (exact + below) / compared:.2f} %, with the documented HotSpot "
              f"patterns {100.0 * (exact + below + known) / compared:.2f} %")
    show_mismatches(label, r)
    if compared < args.min_compared:
        fail(label, f"{compared} stacks compared, expected at least {args.min_compared}")
    if exact + below + r["mismatches"] != compared:
        fail(label, "exact + below_top + mismatches != compared")
    if unexplained:
        fail(label, f"{unexplained} mismatches of no documented pattern (listed above)")
    for m in r["mismatch_list"]:
        recheck_pattern(label, m)
    if args.profile:
        check_profile(label, args.profile, r)
    print(f"{label}: every stack agreed below the top frame or differed only in a documented "
          f"HotSpot pattern")


if __name__ == "__main__":
    main()
