#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a validate-mode report (agent option validate=REPORT.json) and prints its figures.

Fails (exit 1) if the report does not parse, has fewer than --min-compared stacks compared,
or has a mismatch that is not one of the HotSpot patterns documented in docs/VALIDATION.md
(sections 4.1 to 4.3, 4.8 and 4.9; the report names them in "known_pattern"; 4.2 proven by the top
nmethod's scopes, "top_compiled_frame_scopes", and 4.9, "cut_at_deoptimized_frame", are re-derived
from the proof listed with them). Every mismatch is
printed, so a test log shows all of them. With --profile, the profile's meta.extra must hold the
same figures in its "validate" group. With --vthreads N (issue 22), at least N comparisons must have
covered a carrier carrying a virtual thread; outside mount transitions (section 4.7, their own
class) at least --vt-right of them must have every ASGCT frame right (exact, or exact but for
the frames still frozen in the heap, section 4.1), and the mount events' slot must have named
the virtual thread the check found in --vt-slot of the checks or more. Whatever --vthreads, the
slot must have been read once per comparison on a carrier, but on each mount transition, where
the agent skips it and counts the skip (section 5.4). Recovered stacks (ASGCT
failed, the probe recovered them, docs/VALIDATION.md 5.1) are a class of their own: the report
must have it, every one must agree by the recovery's rules (each disagreement is printed), and
with --min-recovered at least that many must have been compared. The same for the anchor walk
done beside ASGCT on every stopped thread ("anchor_walk_beside_asgct"), with --min-anchor-walks.
With --min-anchor-interpreted N (issue 32), at least N of the anchor walks compared must have
named interpreted frames (each held to JVMTI's frame exactly, method and bci), and with
--min-anchor-whole N at least N of them must have ended at the thread's first entry frame, each
with its last frame JVMTI's bottom one (else it counts as a disagreement).
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


ENTER = "jdk.internal.vm.Continuation.enterSpecial@native"
# docs/VALIDATION.md 4.8: Java methods the VM calls from C1's runtime stubs (to link a call site,
# resolve a method type or constant, load a class).
VM_UPCALLS = {"java.lang.invoke.MethodHandleNatives." + n for n in (
    "linkCallSite", "findMethodHandleType", "linkMethod", "linkMethodHandleConstant",
    "linkDynamicConstant")} | {"java.lang.ClassLoader.loadClass"}


def not_thawed(a, g):
    """docs/VALIDATION.md 4.1: ASGCT jumps from the thawed top to enterSpecial, then agrees."""
    if ENTER not in a or ENTER not in g:
        return False
    e, m = a.index(ENTER), g.index(ENTER)
    return e >= 1 and m > e and a[:e] == g[:e] and a[e:] == g[m:]


def cut_at_vm_upcall(a, g):
    """docs/VALIDATION.md 4.8: ASGCT's stack ends at a method the VM calls from a C1 runtime
    stub; that frame is JVMTI's frame k exactly, JVMTI goes on below it, and above it the stacks
    are equal or differ as 4.2 says."""
    if not a or method(a[-1]) not in VM_UPCALLS:
        return False
    return any(g[k] == a[-1] and (a == g[:k + 1] or top_compiled_frame(a, g[:k + 1]))
               for k in range(len(g) - 1))


def top_nmethod_scopes(a, g, scopes):
    """docs/VALIDATION.md 4.2, proven (top_compiled_frame_scopes): the frames that differ above the
    common bottom part, on each side, and each side from its top down to the root's frame at or
    below them, are all scopes of the top Java frame's nmethod (the report's proof, root first)."""
    if not scopes:
        return False
    names, root = {method(s) for s in scopes}, method(scopes[0])
    i, k = len(a), len(g)
    while i and k and a[i - 1] == g[k - 1]:
        i, k = i - 1, k - 1

    def side(s, differ):
        for j, f in enumerate(s):
            if method(f) not in names:
                return False
            if j >= differ - 1 and method(f) == root:
                return True
        return False
    return (i or k) and side(a, i) and side(g, k)


def cut_at_deoptimized_frame(a, g, proof):
    """docs/VALIDATION.md 4.9: the proof (the anchor walk's callee frame, and the frame whose
    return address from it was patched to its nmethod's deopt handler): ASGCT's last frame is the
    callee's root method and JVMTI's frame k, above it equal or 4.2 by the names, and the
    deoptimized frame's method is one of JVMTI's frames below k."""
    if not proof or len(proof) != 2 or not a or method(a[-1]) != method(proof[0]):
        return False
    return any(g[k] == a[-1] and (a == g[:k + 1] or top_compiled_frame(a, g[:k + 1])) and
               any(method(f) == method(proof[1]) for f in g[k + 1:]) for k in range(len(g) - 1))


def recheck_pattern(label, m):
    """The agent's classification, redone here from the frame names when both stacks are whole
    (names cannot tell overloads apart, so this is the looser of the two checks)."""
    a, g = m["asgct"], m["jvmti"]
    if len(a) != m["asgct_num_frames"] or len(g) != m["jvmti_frames"]:
        return
    mine = ("virtual_thread_frames_not_thawed" if not_thawed(a, g)
            else "top_compiled_frame" if top_compiled_frame(a, g)
            else "cut_at_vm_upcall" if cut_at_vm_upcall(a, g)
            else "lost_recursive_frame" if lost_recursive_frame(a, g)
            else "top_compiled_frame_scopes"
            if top_nmethod_scopes(a, g, m.get("top_nmethod_scopes"))
            else "cut_at_deoptimized_frame"
            if cut_at_deoptimized_frame(a, g, m.get("deopt_return")) else None)
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
        if m.get("top_nmethod_scopes"):
            print(f"{label}:   proof: top frame in nmethod {m['top_nmethod']}, its scopes "
                  f"{[method(s) for s in m['top_nmethod_scopes']]}")
        if m.get("deopt_return"):
            print(f"{label}:   proof: ASGCT's last frame in {method(m['deopt_return'][0])}, whose "
                  f"return address into {method(m['deopt_return'][1])} is its deopt handler")
    if r["mismatches_not_listed"]:
        print(f"{label}: {r['mismatches_not_listed']} more mismatches not listed in the report")


def check_recovered(label, r, minimum, key="recovered", cases_key="by_case"):
    rec = r.get(key)
    if rec is None:
        fail(label, f"the report has no '{key}' class (recovered stacks are not compared)")
    cases = {k: v for k, v in rec[cases_key].items() if v["agreed"] or v["disagreed"]}
    print(f"{label}: {key}: {rec['compared']} compared, {rec['agreed']} agreed, "
          f"{rec['disagreed']} disagreed, {rec['deeper_than_depth_not_placed']} deeper than "
          f"depth, {rec['mount_transitions']} in a virtual thread's mount or unmount "
          f"({json.dumps(cases)})")
    for n, m in enumerate(rec["disagreement_list"]):
        print(f"{label}: {key} disagreement {n + 1} on {m['thread']}: recovered "
              f"{m['asgct_num_frames']} frames, GetStackTrace {m['jvmti_frames']}")
        for line in rows(m):
            print(f"{label}: {line}")
    if rec["agreed"] + rec["disagreed"] != rec["compared"]:
        fail(label, f"{key}: agreed + disagreed != compared")
    if rec["disagreed"]:
        fail(label, f"{key}: {rec['disagreed']} stacks disagree with GetStackTrace (above)")
    if rec["compared"] < minimum:
        fail(label, f"{key}: {rec['compared']} stacks compared, expected at least {minimum}")


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
    for key, label_in_profile in (("agreed", "recovered stacks agreeing"),
                                  ("disagreed", "recovered stacks disagreeing")):
        if entries.get(label_in_profile) != r["recovered"][key]:
            fail(label, f"meta.extra validate '{label_in_profile}' = "
                 f"{entries.get(label_in_profile)}, report recovered {key} = "
                 f"{r['recovered'][key]}")


def check_vthreads(label, r, least, exact_min, slot_min):
    v = r.get("virtual_threads")
    if v is None:
        fail(label, "the report has no virtual_threads section")
    slot = v["mount_events_slot"]
    print(f"{label}: virtual threads: route {v['route']} (missing: {v['route_missing']}), "
          f"{v['carriers_found_carrying']} carriers found carrying one, {v['compared']} compared: "
          f"{v['exact']} exact, {v['below_top']} below the top frame, {v['mount_transitions']} in "
          f"a mount transition, {v['mismatches']} mismatches "
          f"({json.dumps(v['mismatches_by_pattern'])}); skipped {json.dumps(v['skipped'])}; "
          f"mount events' slot {json.dumps(slot)}")
    # Every comparison on a carrier read the slot once, but those in a mount transition (4.7):
    # the agent leaves those out and counts them.
    if "skipped_mount_transition" not in slot:
        fail(label, "the report does not count the slot checks skipped in mount transitions")
    checks = slot["same_virtual_thread"] + slot["other_virtual_thread"] + slot["none"]
    if checks + slot["skipped_mount_transition"] != v["compared"] + v["skipped_by_asgct_code"]:
        fail(label, f"the mount events' slot was read {checks} times and skipped "
             f"{slot['skipped_mount_transition']}, for {v['compared']} comparisons and "
             f"{v['skipped_by_asgct_code']} ASGCT codes on carriers")
    if slot["skipped_mount_transition"] != v["mount_transitions"]:
        fail(label, f"the slot check was skipped {slot['skipped_mount_transition']} times, for "
             f"{v['mount_transitions']} mount transitions")
    if least is None:
        return
    if v["compared"] < least:
        fail(label, f"{v['compared']} comparisons on carriers carrying a virtual thread, "
             f"expected at least {least}")
    outside = v["compared"] - v["mount_transitions"]
    rate = v["asgct_frames_all_right"] / outside if outside else 0.0
    print(f"{label}: virtual threads: outside mount transitions, every ASGCT frame right in "
          f"{100.0 * rate:.2f} % ({v['exact']} exact, "
          f"{v['mismatches_by_pattern']['virtual_thread_frames_not_thawed']} but for frozen "
          f"frames); exact rate {100.0 * v['exact_rate']:.2f} % of all")
    if rate < exact_min:
        fail(label, f"virtual threads: {rate:.4f} with every ASGCT frame right < {exact_min}")
    if slot["mount_events_on"] and checks and slot["same_virtual_thread"] < slot_min * checks:
        fail(label, f"the mount events' slot named the virtual thread found in "
             f"{slot['same_virtual_thread']} of {checks} checks (< {slot_min})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--label", default="validate")
    ap.add_argument("--min-compared", type=int, default=50)
    ap.add_argument("--min-recovered", type=int, default=0)
    ap.add_argument("--min-anchor-walks", type=int, default=0)
    ap.add_argument("--min-anchor-interpreted", type=int, default=0)
    ap.add_argument("--min-anchor-whole", type=int, default=0)
    ap.add_argument("--profile")
    ap.add_argument("--vthreads", type=int)
    ap.add_argument("--vt-right", type=float, default=0.99)
    ap.add_argument("--vt-slot", type=float, default=0.99)
    args = ap.parse_args()
    label = args.label
    try:
        r = load_json(args.report)
    except (OSError, ValueError) as e:
        fail(label, f"the report {args.report} does not parse: {e}")
    compared, exact, below = r["compared"], r["exact"], r["below_top"]
    transitions = r.get("mount_transitions", 0)
    known, unexplained = r["mismatches_known_pattern"], r["mismatches_by_pattern"]["unexplained"]
    jvm = r["jvm"]
    print(f"{label}: JVM {jvm['java.vm.name']} {jvm['java.vm.version']} ({jvm['java.vm.vendor']})")
    print(f"{label}: {r['steps']} steps, {compared} stacks compared, {exact} exact, {below} "
          f"agreeing below the top frame, {transitions} in a virtual thread's mount or "
          f"unmount, {r['mismatches']} mismatches "
          f"({json.dumps(r['mismatches_by_pattern'])}), {r['skipped_by_code']} skipped by ASGCT "
          f"code ({json.dumps({k: v for k, v in r['skipped_by_code_detail'].items() if v})}), "
          f"{r['skipped_other_total']} skipped otherwise "
          f"({json.dumps({k: v for k, v in r['skipped_other'].items() if v})})")
    if compared:
        print(f"{label}: exact rate {100.0 * exact / compared:.2f} %, agreement below the top "
              f"frame {100.0 * (exact + below) / compared:.2f} %, with the documented HotSpot "
              f"patterns and mount transitions "
              f"{100.0 * (exact + below + known + transitions) / compared:.2f} %")
    show_mismatches(label, r)
    if compared < args.min_compared:
        fail(label, f"{compared} stacks compared, expected at least {args.min_compared}")
    if exact + below + transitions + r["mismatches"] != compared:
        fail(label, "exact + below_top + mount_transitions + mismatches != compared")
    if unexplained:
        fail(label, f"{unexplained} mismatches of no documented pattern (listed above)")
    for m in r["mismatch_list"]:
        recheck_pattern(label, m)
    check_recovered(label, r, args.min_recovered)
    check_recovered(label, r, args.min_anchor_walks, "anchor_walk_beside_asgct", "by_asgct_answer")
    walks = r.get("anchor_walks_with_interpreted_frames", 0)
    print(f"{label}: anchor walks naming interpreted frames: {walks} "
          f"({r.get('anchor_interpreted_frames', 0)} frames)")
    if walks < args.min_anchor_interpreted:
        fail(label, f"{walks} anchor walks named interpreted frames, expected at least "
             f"{args.min_anchor_interpreted}")
    whole = r.get("anchor_walks_whole_checked", 0)
    print(f"{label}: anchor walks ending at the thread's first entry frame: {whole}")
    if whole < args.min_anchor_whole:
        fail(label, f"{whole} anchor walks ended at the first entry frame, expected at least "
             f"{args.min_anchor_whole}")
    if "virtual_threads" in r or args.vthreads is not None:
        check_vthreads(label, r, args.vthreads, args.vt_right, args.vt_slot)
    if args.profile:
        check_profile(label, args.profile, r)
    print(f"{label}: every stack agreed below the top frame or differed only in a documented "
          f"HotSpot pattern")


if __name__ == "__main__":
    main()
