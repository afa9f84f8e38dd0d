# SPDX-License-Identifier: Apache-2.0
"""Allocation samples on virtual threads (issue 32 item 6, it.vthreads' valloc run): the
allocating thread's Java frames (JVMTI GetStackTrace on the virtual thread) end at
java.lang.VirtualThread.run; the physical stack below them is the carrier's (Continuation.enter,
the carrier's ForkJoin frames, its thread start), which the cpu samples leave out, so an
allocation's native walk below the Java frames is not taken there: no allocation stack under
VirtualThread.run may hold the carrier's root (start_thread, thread_native_entry, __clone3,
JavaCalls::call_helper). Before the fix 64 of 142 such stacks did. meta.extra "Allocations"
counts the walks left out ("native walks on a virtual thread") at least once per such sample.
usage: vthreads_alloc_check.py PROFILE   (exit 1 with one line per failure)"""
import sys

from profile_lib import Profile

CARRIER_ROOT = ("start_thread", "thread_native_entry", "__clone3", "JavaCalls::call_helper",
                "call_stub")


def main():
    p = Profile(sys.argv[1])
    on_virtual, joined = 0, []
    for t in p.doc["threads"]:
        na = t.get("nativeAllocations") or {}
        for s in na.get("stack", []):
            if s is None:
                continue
            names = [p.name[f] for f in p.path(s)]
            if "java.lang.VirtualThread.run" not in names:
                continue
            on_virtual += 1
            if any(n.startswith(CARRIER_ROOT) for n in names):
                joined.append(";".join(names))
    skipped = (p.extra("Allocations") or {}).get(
        "native walks on a virtual thread (none below its Java frames)", 0)
    fails = []
    if on_virtual < 20:
        fails.append(f"{on_virtual} allocation samples under java.lang.VirtualThread.run (want >= 20)")
    if joined:
        fails.append(f"{len(joined)} of {on_virtual} allocation stacks of virtual threads hold "
                     f"their carrier's root, e.g. {joined[0][:300]}")
    if skipped < on_virtual:
        fails.append(f"meta.extra counts {skipped} walks left out on virtual threads, the "
                     f"profile has {on_virtual} such samples")
    for f in fails:
        print(f"FAIL: valloc: {f}")
    if not fails:
        print(f"valloc: {on_virtual} allocation samples on virtual threads, none with the "
              f"carrier's root; {skipped} walks left out")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
