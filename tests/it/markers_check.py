#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a profile of fxagent.test.MarkersWorkload against the workload's truth table.

Two readers: the gz JSON itself (python3 json: absolute counter values, thread lifetimes and
names, meta.extra) and profiler-cli's JSON replies saved by markers_test.sh in the run dir
(pcli-*.json: what the front-end's own loader makes of the markers and counters).
Every expectation is printed; the exit status is the number of failed ones (capped at 100).
"""
import argparse
import os
import sys

from profile_lib import Checker, counter_values, extra_groups, load_json, load_profile

GC_MAX_MS = 5000.0
HOT = "fxagent.test.MarkersWorkload.hot(J)J"
COUNTERS = {  # name -> unit as written
    "Java heap used": "bytes",
    "Java heap committed": "bytes",
    "Process RSS": "bytes",
    "Loaded classes": "",
    "Samples per second": "",
}


def load(run, name):
    return load_json(os.path.join(run, name))


def check_gc(ck, main_markers, gcs):
    gc = [m for m in main_markers if m["name"] == "GC pause"]
    ck.check(len(gc) >= gcs, f"{len(gc)} 'GC pause' markers on main (>= {gcs})")
    durations = [m.get("duration", -1.0) for m in gc]
    ck.check(all(0.0 < d < GC_MAX_MS for d in durations),
              f"every GC pause lasts 0 < d < {GC_MAX_MS:g} ms: {[round(d, 3) for d in durations]}")
    ck.check(all(m.get("markerType") == "JvmGcPause" and m.get("category") == "GC" for m in gc),
              "GC pauses have type JvmGcPause and category GC")
    seqs = [m["data"].get("seq") for m in gc]
    ck.check(seqs == list(range(1, len(gc) + 1)), f"GC pause numbers run 1..{len(gc)}: {seqs}")
    named = [m for m in gc if m["data"].get("collector", "unknown") != "unknown"]
    ck.check(len(named) >= 1, f"{len(named)} GC pauses name their collector "
              f"({sorted({m['data'].get('collector') for m in gc})})")
    heaps = [m for m in gc if m["data"].get("heapBefore", 0) > 0 and m["data"].get("heapAfter", 0) > 0]
    ck.check(len(heaps) >= 1, f"{len(heaps)} GC pauses carry heap used before and after")
    started = [m for m in main_markers if m["name"] == "sampling started"]
    ck.check(len(started) == 1, f"one 'sampling started' marker on main ({len(started)})")


def check_jit(ck, hot_markers):
    hot = [m for m in hot_markers if m.get("markerType") == "JvmJitCompile"
           and m.get("data", {}).get("method") == HOT]
    ck.check(len(hot) >= 1, f"{len(hot)} 'JIT compiled' markers found by searching for {HOT}")
    ck.check(all(m["name"] == "JIT compiled" and m.get("category") == "JIT compiler"
                  and m["data"].get("codeSize", 0) > 0 and "duration" not in m for m in hot),
              "they are instants in category 'JIT compiler' with a code size > 0")


def check_user(ck, user_markers):
    names = [m["name"] for m in user_markers]
    ck.check(names.count("checkpoint") == 3, f"3 'checkpoint' markers on marker-thread ({names})")
    ck.check(all("duration" not in m for m in user_markers if m["name"] == "checkpoint"),
              "checkpoints are instants")
    phase = [m for m in user_markers if m["name"] == "phase-A"]
    ck.check(len(phase) == 1 and phase[0].get("duration", 0) > 0,
              "one 'phase-A' interval with a duration > 0")
    done = [m for m in user_markers if m["name"] == "phase-A done"]
    ck.check(len(done) == 1 and done[0].get("label") == "phase-A done: after 3 checkpoints",
              f"'phase-A done' is labelled name: text ({[m.get('label') for m in done]})")
    ck.check(all(m.get("markerType") == "JvmUserMarker" for m in user_markers),
              "user markers have type JvmUserMarker")


def check_counters_pcli(ck, run, profile):
    """profiler-cli loads each counter with every sample written. The rate is the difference of
    two rounds and a forced round within half a period of the last is skipped, so it has one or
    two values fewer than the others; rounds can be far apart when the drain is busy (a loaded
    CI machine: one round in 1.6 s, the drain reading symbol tables), so only >= 1 is asked of it."""
    written = {c["name"]: len(counter_values(c)) for c in profile["counters"]}
    listed = {c["name"]: c for c in load(run, "pcli-counters.json")["counters"]}
    ck.check(set(COUNTERS) <= set(listed), f"profiler-cli lists every counter ({sorted(listed)})")
    for i in range(len(COUNTERS)):
        info = load(run, f"pcli-counter-{i}.json")
        name = info.get("name")
        least = 1 if name == "Samples per second" else 3
        got = info.get("sampleCount", 0)
        ck.check(name in COUNTERS and got == written.get(name) and got >= least,
                  f"profiler-cli counter c-{i} {name!r}: {got} samples (written "
                  f"{written.get(name)}, >= {least})")
        if COUNTERS.get(name) == "bytes":
            ck.check(info.get("unit") == "bytes", f"{name} is in bytes")


def check_counters_json(ck, profile):
    by_name = {c["name"]: counter_values(c) for c in profile["counters"]}
    used, committed = by_name.get("Java heap used", []), by_name.get("Java heap committed", [])
    ck.check(len(used) == len(committed) and len(used) >= 3,
              f"heap used and committed sampled together ({len(used)}, {len(committed)})")
    ck.check(all(0 < u <= c for u, c in zip(used, committed)),
              "0 < heap used <= heap committed at every sample")
    rss = by_name.get("Process RSS", [])
    ck.check(bool(rss) and max(rss) > 10 * 1024 * 1024, f"RSS > 10 MB (max {max(rss or [0])})")
    classes = by_name.get("Loaded classes", [])
    ck.check(bool(classes) and classes[-1] > 300 and classes == sorted(classes),
              f"loaded classes > 300 and never decreasing (last {classes[-1:]})")
    rate = by_name.get("Samples per second", [])
    ck.check(bool(rate) and max(rate) > 0 and min(rate) >= 0,
              f"samples per second >= 0, some > 0 (max {max(rate or [0])})")


def check_threads(ck, profile, nthreads):
    threads = {t["name"]: t for t in profile["threads"]}
    names = set(threads)
    short = [f"short-renamed-{i}" for i in range(nthreads)]
    present = [n for n in short if n in threads]
    ck.check(len(present) >= nthreads * 3 // 4,
              f"{len(present)} of {nthreads} short-lived threads have a track")
    lifespans = [(threads[n]["registerTime"], threads[n]["unregisterTime"]) for n in present]
    ck.check(all(u is not None and 0 <= r < u for r, u in lifespans),
              "each has 0 <= registerTime < unregisterTime")
    ck.check(not any(f"short-{i}" in names for i in range(nthreads)),
              "no track keeps a short-lived thread's name from before its rename")
    ck.check("renamed-live" in names and "pool-worker-0" not in names
              and threads.get("renamed-live", {}).get("unregisterTime", 0) is None,
              "the live renamed thread shows its current name and no unregisterTime")
    ck.check("marker-thread" in names and "marker-thread-init" not in names,
              "marker-thread shows its current name")


def check_extra(ck, profile):
    mk = extra_groups(profile).get("Markers and counters", {})
    ck.check(mk.get("user markers") == 5, f"meta.extra counts 5 user markers ({mk.get('user markers')})")
    ck.check(mk.get("user ends without a begin") == 1, "the repeated end(h) is counted once")
    # a loss count at 0 has no row; the group says "losses: none" when all of them are 0
    drops = {k: v for k, v in mk.items() if k.startswith("dropped") or k == "losses"}
    ck.check(drops == {"losses": "none"}, f"nothing dropped ({drops})")
    # the GC attribution went through libjvm's management interface, not the MXBean fallback
    src = mk.get("GC attribution source")
    ck.check(src == "HotSpot management interface",
             f"GC attribution via the management interface ({src!r}; "
             f"{mk.get('GC attribution: management interface not used')!r})")
    setup = str(mk.get("GC attribution set-up CPU time", ""))
    ck.check(setup.endswith(" ms") and float(setup[:-3] or -1) > 0,
             f"the GC attribution's set-up CPU time is reported ({setup!r})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--gcs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=20)
    ap.add_argument("--label", default="markers")
    a = ap.parse_args()
    ck = Checker(a.label, verbose=True)
    profile = load_profile(a.profile)
    check_gc(ck, load(a.run, "pcli-main-markers.json")["flatMarkers"], a.gcs)
    check_jit(ck, load(a.run, "pcli-jit-hot.json")["flatMarkers"])
    check_user(ck, load(a.run, "pcli-user-markers.json")["flatMarkers"])
    check_counters_pcli(ck, a.run, profile)
    check_counters_json(ck, profile)
    check_threads(ck, profile, a.threads)
    check_extra(ck, profile)
    print(f"{a.label}: {len(ck.failures)} failure(s)")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
