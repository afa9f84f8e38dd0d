# SPDX-License-Identifier: Apache-2.0
"""The checks of vthreads_test.sh (issue 22), on what profiler-cli reads from the profiles.
  dump NAME      writes NAME-threads.json (thread list) and NAME-fn-<index>.json (thread
                 functions) for every thread with samples, from the loaded session;
  waits NAME     writes NAME-waits.json: per waiter-N/taker-N track, its "Virtual thread wait"
                 markers (profiler-cli thread markers) and the stack of the longest one;
  check --label L RUN_DIR   the assertions, over those files and the workload's own counts;
  dump_frozen NAME   writes NAME-fn.json: profiler-cli's functions of the frozen-0 track and
                 the carriers' (vthreads_frozen_test.sh);
  frozen --label L RUN_DIR NAME...   vthreads_frozen_test.sh's assertions (check_frozen) on
                 each NAME.json.gz of VThreadWorkload frozen and its NAME-fn.json."""
import json
import math
import os
import re
import subprocess
import sys

from profile_lib import Checker, Profile, extra_entries, load_json

CK = Checker(verbose=True)
check = CK.check


def pcli(*args):
    session = os.environ.get("PCLI_SESSION")
    cmd = ["profiler-cli", *args, "--json"] + (["--session", session] if session else [])
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def dump(name):
    threads = pcli("thread", "list")["threads"]
    with open(f"{name}-threads.json", "w", encoding="utf-8") as f:
        json.dump(threads, f)
    for t in threads:
        # Only the tracks the checks read (check_cpu, check_wall, check_pinned): each is one
        # profiler-cli call, 1-5 s on a loaded 2-core machine.
        if not re.match(r"(alpha|beta|pinned|pinnative|ForkJoinPool|platform-burn)", t["name"]):
            continue
        fn = pcli("thread", "functions", "--thread", t["threadHandle"], "--include-idle",
                  "--limit", "0")
        with open(f"{name}-fn-{t['threadIndex']}.json", "w", encoding="utf-8") as f:
            json.dump(fn["functions"], f)


def dump_waits(name):
    out = {}
    for t in pcli("thread", "list")["threads"]:
        if not re.match(r"(waiter|taker)-\d+ \(virtual #\d+\)$", t["name"]):
            continue
        mk = pcli("thread", "markers", "--thread", t["threadHandle"], "--search",
                  "Virtual thread wait", "--limit", "0")
        kinds = [b for b in mk.get("byType", []) if b["markerName"] == "Virtual thread wait"]
        row = {"count": sum(b["count"] for b in kinds),
               "min": min([b["durationStats"]["min"] for b in kinds] or [0]), "stack": []}
        top = [m for b in kinds for m in b.get("topMarkers", []) if m.get("hasStack")]
        if top:
            st = pcli("marker", "stack", "--marker", top[0]["handle"])
            row["stack"] = [f["name"] for f in st["stack"]["frames"]]
        out[t["name"].split(" ")[0]] = row
    with open(f"{name}-waits.json", "w", encoding="utf-8") as f:
        json.dump(out, f)


def load(run, name):
    threads = load_json(os.path.join(run, f"{name}-threads.json"))
    out = {}
    for t in threads:
        p = os.path.join(run, f"{name}-fn-{t['threadIndex']}.json")
        if os.path.exists(p):
            out[t["name"]] = load_json(p)
    return out


def total(functions, pattern):
    return max([f["totalSamples"] for f in functions if re.search(pattern, f["name"])] or [0])


def group(name):
    m = re.match(r"(alpha|beta)-\d+ \(virtual #\d+\)$", name)
    return m.group(1) if m else None


def check_cpu(run, label, name="cpu"):
    th = load(run, name)
    vts = {n: f for n, f in th.items() if group(n)}
    label = f"{label}: {name}" if name != "cpu" else label
    check(len(vts) == 6, f"{label}: cpu: 6 virtual thread tracks alpha-N/beta-N ({sorted(vts)})")
    own = {n: total(f, r"Burner\.run$") for n, f in vts.items()}
    wrong = sum(total(f, "betaWork" if group(n) == "alpha" else "alphaWork")
                for n, f in vts.items())
    elsewhere = sum(total(f, r"Burner\.run$") for n, f in th.items()
                    if n.startswith("ForkJoinPool"))
    all_vt = sum(own.values()) + elsewhere
    check(all_vt >= 50, f"{label}: cpu: {all_vt} samples of the virtual threads' code")
    if all_vt:
        check(sum(own.values()) >= 0.95 * all_vt,
              f"{label}: cpu: {sum(own.values())} of {all_vt} on their own track (>= 95 %)")
        check(wrong <= 0.01 * all_vt,
              f"{label}: cpu: {wrong} of {all_vt} on another virtual thread's track (<= 1 %)")
    units = {}
    for line in open(os.path.join(run, f"{name}.out"), encoding="utf-8"):
        m = re.match(r"units (\S+) (\d+)$", line.strip())
        if m:
            units[m.group(1)] = int(m.group(2))
    vt_units = {k: v for k, v in units.items() if group(k + " (virtual #0)")}
    su, so = sum(vt_units.values()), sum(own.values())
    for n, s in own.items():
        short = n.split(" ")[0]
        if su and so and short in vt_units:
            a, b = 100.0 * s / so, 100.0 * vt_units[short] / su
            # A share of n samples is binomial: 4 standard deviations of it (7 pp at 424
            # samples, p = 1/6) or 5 pp, whichever is wider.
            tol = max(5.0, 400.0 * math.sqrt(b / 100.0 * (1 - b / 100.0) / so))
            check(abs(a - b) <= tol,
                  f"{label}: cpu: {short} has {a:.1f} % of the samples, {b:.1f} % of the work "
                  f"({tol:.1f} pp)")
    pb = th.get("platform-burn", [])
    check(total(pb, "alphaWork") > 0, f"{label}: cpu: the platform thread keeps its own track")


def check_wall(run, label):
    th = load(run, "wall")
    vts = {n: f for n, f in th.items() if group(n)}
    running = sum(total(f, r"Burner\.run$") for f in vts.values())
    # "[state: RUNNABLE, not on CPU]" (issue 18) is not a waiting label: the carrier was runnable
    # and the OS ran something else (a loaded machine); it is reported, not counted.
    stated = sum(total(f, r"^\[state: (?!RUNNABLE, not on CPU\])") for f in vts.values())
    preempted = sum(total(f, r"^\[state: RUNNABLE, not on CPU\]") for f in vts.values())
    check(running >= 50, f"{label}: wall: {running} samples on the burning virtual threads")
    if running:
        check(stated <= 0.02 * running,
              f"{label}: wall: {stated} of {running} running virtual-thread samples carry a waiting "
              f"label (<= 2 %; {preempted} runnable but not on CPU)")


def check_pinned(run, label, name="pinned"):
    th = load(run, name)
    label = f"{label}: {name}" if name != "pinned" else label
    # prefix, how many, the samples of its code, the state label most of them must carry:
    # sleeping in a class initializer (the carrier blocked), reading a pipe (in native code)
    for prefix, want, code, state in (
            ("pinned-", 2, r"Unsafe\.park|pinnedSleep|\[state: ", "[state: pinned]"),
            ("pinnative-", 1, r"pinnedRead", "[state: pinned, in native, not on CPU]")):
        pins = {n: f for n, f in th.items() if n.startswith(prefix)}
        check(len(pins) == want, f"{label}: pinned: {want} tracks {prefix}N ({sorted(pins)})")
        for n, f in pins.items():
            all_s = total(f, code)
            pinned = total(f, "^" + re.escape(state) + "$")
            check(all_s > 0 and pinned >= 0.5 * all_s,
                  f"{label}: pinned: {n}: {pinned} of {all_s} samples say {state}")


def check_waits(run, label):
    rows = load_json(os.path.join(run, "waits-waits.json"))
    counts = {}
    for line in open(os.path.join(run, "waits.out"), encoding="utf-8"):
        m = re.match(r"waits (\S+) (\d+)$", line.strip())
        if m:
            counts[m.group(1)] = int(m.group(2))
    check(len(counts) == 6 and set(rows) == set(counts),
          f"{label}: waits: a track with wait markers for each of {sorted(counts)} ({sorted(rows)})")
    for name, n in sorted(counts.items()):
        r = rows.get(name, {"count": 0, "min": 0, "stack": []})
        # Each sleep (20 ms) or take (~60 ms) is one wait >= vtwait=10ms; the last may be cut.
        check(0.9 * n <= r["count"] <= n + 2,
              f"{label}: waits: {name}: {r['count']} wait markers for {n} waits it counted")
        check(r["count"] == 0 or r["min"] >= 10.0,
              f"{label}: waits: {name}: the shortest marker lasts {r['min']:.1f} ms (>= vtwait=10ms)")
        want = "waiterSleep" if name.startswith("waiter") else "takerTake"
        check(any(f.endswith("." + want) for f in r["stack"]) and
              any(f.startswith("java.lang.VirtualThread.") for f in r["stack"]),
              f"{label}: waits: {name}: the marker's stack is where it waited ({want}): {r['stack'][:6]}")


FROZEN = "[virtual thread: callers still frozen, not walked by AGCT]"
FROZEN_ROW = "samples whose callers were still frozen (not walked by AGCT)"


def dump_frozen(name):
    """profiler-cli's functions of frozen-0's track, or of the carriers past the track cap."""
    out = []
    for t in pcli("thread", "list")["threads"]:
        if re.match(r"(frozen-0 \(virtual #\d+\)|ForkJoinPool)", t["name"]):
            out += pcli("thread", "functions", "--thread", t["threadHandle"], "--include-idle",
                        "--limit", "0")["functions"]
    with open(f"{name}-fn.json", "w", encoding="utf-8") as f:
        json.dump(out, f)


def check_frozen(run, label, name):
    """docs/VALIDATION.md 4.1 marked: the samples of a remounted virtual thread (frozen-N,
    burning in frozenBurn under a 400-deep recursion after a sleep) carry FROZEN at the root of
    the virtual thread's stack (its track's root, or the frame under "[virtual thread] NAME*"
    past the track cap or "[virtual thread] (mount or unmount in progress)": where enterSpecial
    was), directly below the thawed top frozenDescend;
    those of one never unmounted (steady-N in steadyBurn) none; meta.extra counts exactly the
    samples with it; profiler-cli shows it."""
    prof = profile(run, name)
    label = f"{label}: {name}"
    burn = {"frozen": [0, 0], "steady": [0, 0]}  # [samples, with FROZEN]
    marked, misplaced, not_top = 0, 0, 0
    for t in prof.threads():
        for s in t["samples"]["stack"]:
            names = prof.names(s)
            at = names.index(FROZEN) if FROZEN in names else -1
            if at >= 0:
                marked += 1
                # past the cap under its name's root, or, sampled while the carrier mounted or
                # unmounted it, under the transition's root (which thread is not known yet)
                under_root = at == 1 and (names[0].startswith("[virtual thread] frozen-") or
                                          names[0] == "[virtual thread] (mount or unmount in progress)")
                own_root = at == 0 and re.match(r"frozen-\d+ \(virtual #\d+\)$", t["name"])
                misplaced += not (under_root or own_root)
            for g in burn:
                if any(n.endswith(f".{g}Burn") for n in names):
                    burn[g][0] += 1
                    burn[g][1] += at >= 0
                    not_top += at >= 0 and not names[at + 1].endswith(".frozenDescend")
    fz, st = burn["frozen"], burn["steady"]
    # 20 samples each: enough to tell >= 80 % from none; loaded 2-core machines gave the
    # remounted burners 47 and 28 in 4 s (quiet: ~100).
    check(fz[0] >= 20 and fz[1] >= 0.8 * fz[0],
          f"{label}: {fz[1]} of {fz[0]} frozenBurn samples (remounted virtual threads) carry "
          f"{FROZEN} (>= 80 %)")
    check(st[0] >= 20 and st[1] == 0,
          f"{label}: {st[1]} of {st[0]} steadyBurn samples (never unmounted) carry it (none)")
    check(marked > 0 and misplaced == 0,
          f"{label}: {misplaced} of {marked} samples with it have it elsewhere than at the "
          f"root of a frozen-N virtual thread's stack")
    check(not_top == 0, f"{label}: {not_top} frozenBurn samples with it have another frame "
                        f"than the thawed top frozenDescend directly above it")
    extra = prof.extra("Virtual threads") or {}
    check(extra.get(FROZEN_ROW) == marked,
          f"{label}: meta.extra \"{FROZEN_ROW}\" is {extra.get(FROZEN_ROW)!r}, "
          f"{marked} samples with the frame")
    fn = load_json(os.path.join(run, f"{name}-fn.json"))
    shown = sum(f["totalSamples"] for f in fn if f["name"] == FROZEN)
    check(shown > 0, f"{label}: profiler-cli shows the frame in {shown} samples of the "
                     f"frozen-0 track or the carriers")


def profile(run, name):
    return Profile(os.path.join(run, f"{name}.json.gz"))


def vt_tracks(prof):
    return [t for t in prof.threads() if re.search(r" \(virtual #\d+\)$", t["name"])]


ENTRY = re.compile(r"^(jdk\.internal\.vm\.Continuation\.|java\.lang\.VirtualThread\.run$|"
                   r"java\.lang\.VirtualThread\$VThreadContinuation|java\.lang\.Thread\.runWith$)")


def check_review(run, label):
    """The UI review of issue 22: one root per virtual thread, [state: pinned] in Idle/Pinned,
    yields not shown as waits, every wait marker with its kind."""
    for name in ("cpu", "wall", "pinned"):
        prof = profile(run, name)
        entry, pinned, pinned_ok, n, idle = 0, 0, 0, 0, 0
        for t in vt_tracks(prof):
            for s in t["samples"]["stack"]:
                if s is None:
                    continue
                n += 1
                path = prof.path(s)
                leaf = path[-1]
                idle += prof.name[leaf] == "[idle]"
                entry += bool(ENTRY.match(prof.name[path[0]]))
                if prof.name[leaf] == "[state: pinned]":
                    pinned += 1
                    pinned_ok += prof.cat[leaf] == "Idle" and prof.sub[leaf] == "Pinned"
        check(n > 0 and entry == 0,
              f"{label}: {name}: {entry} of {n} virtual-thread samples start at the continuation's "
              f"entry, not the thread's task (one call tree root)")
        if name == "wall":
            # 6 burners yielding on 2 carriers are unmounted most of the time: with no sample
            # then, the gaps would show as running time.
            check(idle > 0, f"{label}: wall: {idle} [idle] samples on virtual-thread tracks "
                            f"for their unmounted gaps")
        if name == "pinned":
            check(pinned > 0 and pinned_ok == pinned,
                  f"{label}: pinned: {pinned_ok} of {pinned} [state: pinned] samples in Idle/Pinned")
    for name in ("cpu", "waits"):
        prof = profile(run, name)
        kinds = {}
        for t in vt_tracks(prof):
            for m in prof.markers(t, "Virtual thread wait"):
                kinds.setdefault(t["name"].split("-")[0], []).append((m["data"] or {}).get("kind"))
        if name == "cpu":
            # alpha/beta yield to each other on 2 carriers: those are not waits.
            n = sum(len(v) for k, v in kinds.items() if k in ("alpha", "beta"))
            extra = {e["label"]: e["value"] for _, e in extra_entries(prof.doc)}
            y = extra.get("waits left out: yields (runnable, not waiting)", -1)
            check(n == 0 and y >= 0,
                  f"{label}: cpu: {n} wait markers on the yielding alpha/beta threads ({y} yields "
                  f"counted, no wait marker)")
            # A yield of at least vtwait= shows only as waiting for a carrier (issue 30).
            c = sum(len(prof.markers(t, "Waiting for a carrier")) for t in vt_tracks(prof)
                    if t["name"].split("-")[0] in ("alpha", "beta"))
            check(c == y, f"{label}: cpu: {c} 'Waiting for a carrier' markers on alpha/beta for "
                          f"{y} yields counted")
        else:
            for group, want in (("waiter", "sleep"), ("taker", "park")):
                got = kinds.get(group, [])
                check(got and all(k == want for k in got),
                      f"{label}: waits: {group}: every wait marker has kind {want} "
                      f"({sorted(set(map(str, got)))})")


def check_sleepsum(run, label):
    """Issue 30 items 5 and 11, VThreadWorkload sleepsum in mode=wall without vtwait= (its default
    there), 2 carriers, vtracks=8: the sleep markers add up to the sleeps' own time (count * 20 ms,
    within 10 %), the time to the next mount is in "Waiting for a carrier" markers, each right
    after its sleep; past the cap, the carriers' samples are under one root per name and the
    virtual thread is named in "Virtual thread" markers."""
    major = int(os.environ.get("VT_JDK_MAJOR", "0"))
    out = {}
    for line in open(os.path.join(run, "sleepsum.out"), encoding="utf-8"):
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    sleeps, each = out.get("sleeps", 0), out.get("sleep_ms", 0)
    prof = profile(run, "sleepsum")
    extra = prof.extra("Virtual threads") or {}
    check(extra.get("vtwait= (ns)") == 1000000,
          f"{label}: sleepsum: mode=wall without vtwait= records waits of 1 ms "
          f"(vtwait= (ns) {extra.get('vtwait= (ns)')})")
    sleep_ms, n_sleep, ends = 0.0, 0, {}
    carrier_ms, n_carrier, after = 0.0, 0, 0
    for t in prof.threads():
        for m in prof.markers(t, "Virtual thread wait"):
            d = m["data"] or {}
            if d.get("kind") == "sleep" and str(d.get("vthread", "")).startswith("sleepy-"):
                n_sleep += 1
                sleep_ms += m["end"] - m["start"]
                ends[(d["vthread"], round(m["end"], 3))] = True
        for m in prof.markers(t, "Waiting for a carrier"):
            d = m["data"] or {}
            n_carrier += 1
            carrier_ms += m["end"] - m["start"]
            after += (d.get("vthread"), round(m["start"], 3)) in ends
    check(sleeps > 100 and each == 20, f"{label}: sleepsum: the workload slept {sleeps} times")
    check(0.9 * sleeps <= n_sleep <= sleeps + 24,
          f"{label}: sleepsum: {n_sleep} sleep markers for {sleeps} sleeps")
    if major < 24:
        # No VirtualThread.timeout before JDK 24: a sleep ends at the mount, counted so.
        check(extra.get("waits ended at the mount (no wake time: untimed, or no timeout field)",
                        0) >= n_sleep,
              f"{label}: sleepsum: JDK {major}: every sleep counted as ending at the mount")
        return
    want = sleeps * each
    check(n_sleep > 0 and abs(sleep_ms - want) <= 0.1 * want,
          f"{label}: sleepsum: sleep markers add up to {sleep_ms:.0f} ms for {sleeps} sleeps of "
          f"{each} ms ({want} ms, within 10 %)")
    check(n_sleep > 0 and abs(sleep_ms / n_sleep - each) <= 0.1 * each,
          f"{label}: sleepsum: a sleep marker lasts {sleep_ms / max(n_sleep, 1):.2f} ms on average "
          f"({each} ms, within 10 %)")
    # 24 threads wanting 3 ms of CPU every 23 ms need 3.1 carriers: woken sleepers queue.
    check(n_carrier > 0 and carrier_ms > 0,
          f"{label}: sleepsum: {n_carrier} 'Waiting for a carrier' markers, {carrier_ms:.0f} ms")
    check(after == n_carrier, f"{label}: sleepsum: {after} of {n_carrier} carrier waits start where "
                              f"a sleep marker of the same virtual thread ends")
    check(extra.get("waiting for a carrier: markers") == n_carrier,
          f"{label}: sleepsum: meta.extra counts {extra.get('waiting for a carrier: markers')} "
          f"carrier waits, the profile has {n_carrier}")
    roots, named, marks = {}, 0, 0
    for t in prof.threads():
        if not t["name"].startswith("ForkJoinPool"):
            continue
        marks += len(prof.markers(t, "Virtual thread"))
        for s in t["samples"]["stack"]:
            if s is not None:
                r = prof.name[prof.path(s)[0]]
                roots[r] = roots.get(r, 0) + 1
        named += sum(1 for m in prof.markers(t, "Virtual thread")
                     if re.match(r"sleepy-\d+ #\d+$", str((m["data"] or {}).get("vthread"))))
    per_id = [r for r in roots if re.search(r"#\d+$", r)]
    past = extra.get("of which under a root frame (past the track cap)", 0)
    check(not per_id, f"{label}: sleepsum: carrier roots naming one virtual thread: {per_id[:4]}")
    # a thread whose name was not read yet (a loaded machine) is under "[virtual thread]"
    unnamed = roots.get("[virtual thread]", 0)
    check(past > 0 and roots.get("[virtual thread] sleepy-*", 0) + unnamed == past,
          f"{label}: sleepsum: {roots.get('[virtual thread] sleepy-*', 0)} carrier samples under "
          f"'[virtual thread] sleepy-*' and {unnamed} under '[virtual thread]' (name not read), "
          f"{past} past the cap ({sorted(roots)[:6]})")
    check(named > 0 and marks == extra.get("'Virtual thread' markers on carriers (past the cap)")
          and named >= marks - unnamed,
          f"{label}: sleepsum: {named} of {marks} 'Virtual thread' markers name a sleepy-N #ID on "
          f"the carriers ({unnamed} samples of unnamed threads)")


def check_churn(run, label):
    """Issue 30 item 11 with thousands of virtual threads: 100k short-lived ones (churn, loop=1s,
    vtracks=32): every carrier sample past the cap is under one root per name ("[virtual thread]
    churn-*", or "[virtual thread]" unnamed), none under a root of its own, and the "Virtual
    thread" markers number what meta.extra counts. meta.extra's figures are the recording's
    totals, kept across loop= periods (docs/PRODUCTION.md, "Each recording's figures are its
    own"): a file's own share of a figure is its increase over the previous file of the series
    (the last file, written at exit after the periods, may add nothing to it)."""
    prev = {}
    for f in sorted((x for x in os.listdir(run) if re.match(r"churn-\d+\.json\.gz$", x)),
                    key=lambda x: int(re.findall(r"\d+", x)[0])):
        prof = profile(run, f[:-len(".json.gz")])
        extra = prof.extra("Virtual threads") or {}
        roots, marked = {}, set()
        for t in prof.threads():
            if not t["name"].startswith("ForkJoinPool"):
                continue
            for s in t["samples"]["stack"]:
                # the root, or under a "[truncated]" root (a stack cut before its bottom)
                top = [prof.name[x] for x in prof.path(s)[:2]] if s is not None else []
                r = next((x for x in top if x.startswith("[virtual thread]")), None)
                if r is not None:
                    roots[r] = roots.get(r, 0) + 1
            marked.update(str((m["data"] or {}).get("vthread")) for m in prof.markers(t, "Virtual thread"))
        total = {k: extra.get(k, 0) for k in ("of which under a root frame (past the track cap)",
                                              "'Virtual thread' markers on carriers (past the cap)")}
        past, n_marks = (total[k] - prev.get(k, 0) for k in total)
        prev = total
        grouped = roots.get("[virtual thread]", 0) + roots.get("[virtual thread] churn-*", 0)
        check(not [r for r in roots if re.search(r"#\d+$", r)],
              f"{label}: {f}: no carrier root names one virtual thread ({sorted(roots)[:4]})")
        # The count is the route's: a sample whose walk failed ([AGCT: ...]) or was recovered
        # in part ([truncated] over the carrier's frames, mid-mount) keeps its own root.
        check(grouped <= past and past - grouped <= max(2, 0.2 * past),
              f"{label}: {f}: {grouped} carrier samples under the per-name roots, {past} past the "
              f"cap in this file's period (at most 2 or 20 % fewer)")
        check((grouped == 0 or len(marked) > 0) and len(marked) <= n_marks,
              f"{label}: {f}: {len(marked)} virtual threads named in {n_marks} 'Virtual thread' "
              f"markers (this file's period) for {grouped} samples")


def check_route(run, label):
    """vtwait=0 on JDK 24+ tracks mounts by the carrier's JavaThread field (no mount events);
    the default vtwait=10ms by the mount events; earlier JDKs by the events, saying why."""
    major = int(os.environ.get("VT_JDK_MAJOR", "0"))
    for name, want in (("field", "JavaThread field" if major >= 24 else "mount events"),
                       ("fieldpin", "JavaThread field" if major >= 24 else "mount events"),
                       ("cpu", "mount events")):
        extra = {e["label"]: e["value"] for g, e in extra_entries(profile(run, name).doc)
                 if g == "Virtual threads"}
        got = extra.get("mounts tracked by")
        check(got == want, f"{label}: {name}: mounts tracked by {got!r} (want {want!r}; "
              f"{extra.get('not by the JavaThread field because')!r})")


def check_transitions(run, label):
    """HotSpot's JVMTI mount transitions: "on" by default, "off" with the experimental flag, and
    then (JDK 24+) the JavaThread field still gives each burner's samples to a virtual thread."""
    major = int(os.environ.get("VT_JDK_MAJOR", "0"))
    for name, want in (("field", "on"), ("cpu", "on"), ("notrans", "off")):
        got = (profile(run, name).extra("Virtual threads") or {}).get(
            "HotSpot's JVMTI mount transitions", "")
        check(got.startswith(want + (":" if want == "on" else " ")),
              f"{label}: {name}: HotSpot's JVMTI mount transitions {got!r} (want {want!r})")
    if major < 24:
        return
    prof = profile(run, "notrans")
    on_vt = on_carrier = 0
    for t in prof.threads():
        n = sum(1 for s in t["samples"]["stack"]
                if any(x.endswith("Burner.run") for x in prof.names(s)))
        if re.match(r"virtual thread #\d+$", t["name"]):
            on_vt += n
        elif t["name"].startswith("ForkJoinPool"):
            on_carrier += n
    total_ = on_vt + on_carrier
    check(total_ >= 30, f"{label}: notrans: {total_} samples of the burners")
    check(on_vt >= 0.95 * total_,
          f"{label}: notrans: {on_vt} of {total_} burner samples on virtual-thread tracks (>= 95 %)")


def main():
    if sys.argv[1] == "dump":
        dump(sys.argv[2])
        return 0
    if sys.argv[1] == "waits":
        dump_waits(sys.argv[2])
        return 0
    if sys.argv[1] == "dump_frozen":
        dump_frozen(sys.argv[2])
        return 0
    if sys.argv[1] == "frozen":
        for name in sys.argv[5:]:
            check_frozen(sys.argv[4], sys.argv[3], name)
        return CK.exit_code()
    label, run = sys.argv[3], sys.argv[4]
    check_cpu(run, label)
    check_cpu(run, label, "field")
    check_route(run, label)
    check_wall(run, label)
    check_pinned(run, label)
    check_pinned(run, label, "fieldpin")
    check_waits(run, label)
    check_sleepsum(run, label)
    check_churn(run, label)
    check_review(run, label)
    check_transitions(run, label)
    return CK.exit_code()


if __name__ == "__main__":
    sys.exit(main())
