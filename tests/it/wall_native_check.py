#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the profiler-cli views wall_native_test.sh wrote (issue 16 in wall mode).

usage: wall_native_check.py --label NAME RUN_DIR
Reads RUN_DIR/pcli-PROFILE-THREAD-VIEW.json (VIEW top-down or samples, with idle samples). A
path is a call-tree path root to leaf, its weight the leaf node's self samples. For each waiter
of the wait profile, at least half of the thread's samples lie on paths whose leaf is the
thread's state frame, right above a frame of the C library (library libc.so*), with the thread's
JVM or JNI frame below that and its Java method below that; and at least half of the samples are
in the Idle category. jni: at least half of the JniBurn.burn samples have fxmixed_burn_cpu (or
its JNI entry) above JniBurn.burn. wait-off (cstack=no): at least half of each waiter's samples
have its state frame right above its Java method, and no path holds a library frame. wait: the
profile's meta.extra "Kernel stacks" says why wall mode has no kernel frames (no callchain).
"""
import os
import re
import sys

from profile_lib import Profile, idle_samples, load_json as load, run_dir_args

# thread: (state frame, JVM/JNI frame under the C library's, the Java method under that)
WAITERS = {
    "waiter-pipe-read": ("[state: IN_NATIVE, not on CPU]", r"^Java_sun_nio_ch_\w+_read0$",
                         r"^sun\.nio\.ch\.\w+\.read0$"),
    "waiter-socket-read": ("[state: IN_NATIVE, not on CPU]", r"^Java_sun_nio_ch_\w+_read0$",
                           r"^sun\.nio\.ch\.\w+\.read0$"),
    "waiter-sleep": ("[state: SLEEPING]", r"^JVM_Sleep(Nanos)?$", r"^java\.lang\.Thread\.sleep"),
    "waiter-park-0": ("[state: PARKED]", r"^Unsafe_Park$", r"^jdk\.internal\.misc\.Unsafe\.park$"),
}


def paths(node, prefix=()):
    """(path of nodes root first, self samples) for every node with self samples."""
    for c in node.get("children", []):
        p = prefix + (c,)
        if c.get("selfSamples", 0) > 0:
            yield p, c["selfSamples"]
        yield from paths(c, p)


def is_lib(n, lib=""):
    """A native frame: profiler-cli writes its library before a '!' (Java frames have none)."""
    return n["nameWithLibrary"] != n["name"] and n["nameWithLibrary"].startswith(lib)


def mixed_path(p, state, native, java):
    """Leaf = state, under it a libc frame, then (leaf to root) more native frames down to one
    matching `native`, right under which the Java method matching `java` lies."""
    if len(p) < 4 or p[-1]["name"] != state or not is_lib(p[-2], "libc.so"):
        return False
    i = len(p) - 3
    while i > 0 and is_lib(p[i]) and not re.search(native, p[i]["name"]):
        i -= 1
    return i > 0 and re.search(native, p[i]["name"]) is not None and \
        re.search(java, p[i - 1]["name"]) is not None


def main():
    run, ck = run_dir_args("wall_native_check")
    check = ck.check

    def view(profile, thread, v):
        return load(os.path.join(run, f"pcli-{profile}-{thread}-{v}.json"))

    for t, (state, native, java) in WAITERS.items():
        tree = view("wait", t, "top-down")["regularCallTree"]
        total = tree["totalSamples"]
        good = sum(w for p, w in paths(tree) if mixed_path(p, state, native, java))
        check(total >= 20 and 2 * good >= total,
              f"wait {t}: {good} of {total} samples are '{state}' <- libc <- ... <- "
              f"{native} <- {java}")
        n_idle = idle_samples(view("wait", t, "samples"))
        check(2 * n_idle >= total, f"wait {t}: {n_idle} of {total} samples in the Idle category")

    tree = view("jni", "main", "top-down")["regularCallTree"]
    burn = named = 0
    for p, w in paths(tree):
        names = [n["name"] for n in p]
        if "fxagent.mixed.JniBurn.burn" not in names:
            continue
        burn += w
        above = names[names.index("fxagent.mixed.JniBurn.burn") + 1:]
        if any(n in ("fxmixed_burn_cpu", "Java_fxagent_mixed_JniBurn_burn") for n in above):
            named += w
    check(burn >= 20 and 2 * named >= burn,
          f"jni: {named} of {burn} JniBurn.burn samples show the C burn function above it")

    for t, (state, _, java) in WAITERS.items():
        tree = view("wait-off", t, "top-down")["regularCallTree"]
        total = tree["totalSamples"]
        ps = list(paths(tree))
        good = sum(w for p, w in ps if len(p) > 1 and p[-1]["name"] == state and
                   re.search(java, p[-2]["name"]))
        libs = sum(w for p, w in ps if any(is_lib(n) for n in p))
        check(total >= 20 and 2 * good >= total and libs == 0,
              f"wait-off {t} (cstack=no): {good} of {total} samples are '{state}' <- {java}, "
              f"{libs} with a library frame")
    why = (Profile(os.path.join(run, "wait.json.gz")).extra("Kernel stacks") or {}).get(
        "kernel frames unavailable", "")
    check(why.startswith("mode=wall") and "no callchain" in why,
          f"wait: meta.extra 'Kernel stacks' says why wall mode has no kernel frames: {why!r}")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
