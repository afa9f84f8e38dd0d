#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the profiles of kernel_stacks_test.sh (issue 16, kernel frames in cpu mode).

usage: kernel_stacks_check.py --why PROFILE.json.gz
          prints why kernel frames are unavailable (meta.extra "Kernel stacks", "kernel frames
          unavailable"), or nothing when they are; exits 1 when the group is missing
       kernel_stacks_check.py --label NAME RUN_DIR   (reads devnull, devnull-off .json.gz and
          the profiler-cli replies pcli-samples.json, pcli-top-down.json of devnull-writer)
  devnull:      category 8 is "Kernel" (subcategories Other, System call, Page fault); on the
                devnull-writer thread at least 5 samples have a Kernel frame of the write path
                above (leaf side of) a Native frame above java.io.FileOutputStream.write*; in
                every sample the Kernel frames are the leaf-most block (no Native or Java frame
                above one); the write path's frames are in the "System call" subcategory;
                "Kernel stacks" counts as many samples with kernel frames as the profile holds
                at least;
  profiler-cli: the thread's category breakdown has Kernel samples, and its call tree has a
                write-path kernel function under a FileOutputStream.write* node;
  devnull-off:  (kstack=no) no Kernel frame, and "Kernel stacks" says it was turned off.
  kept symbols: devnull read /proc/kallsyms and kept the table in the test's cache folder
                ($FXAGENT_CACHE/kallsyms, mode 0600); devnull-cached read it from there and
                names write-path kernel frames with it; neither says the cache was not used.
"""
import argparse
import os
import sys

from profile_lib import Checker, Profile, load_json

WRITE_PATH = {"ksys_write", "vfs_write", "write_null", "__x64_sys_write", "x64_sys_call",
              "do_syscall_64", "entry_SYSCALL_64", "entry_SYSCALL_64_after_hwframe",
              "__do_sys_write", "__se_sys_write"}
FOS = "java.io.FileOutputStream.write"


def write_path_sample(p, path):
    """A write-path Kernel frame above a Native frame above FileOutputStream.write*."""
    fos = next((i for i, f in enumerate(path) if p.name[f].startswith(FOS)), None)
    if fos is None:
        return False
    nat = next((i for i in range(fos + 1, len(path)) if p.cat[path[i]] == "Native"), None)
    return nat is not None and any(p.cat[f] == "Kernel" and p.name[f] in WRITE_PATH
                                   for f in path[nat + 1:])


def kernel_on_top(p, path):
    """Once a Kernel frame appears (root to leaf), every frame after it is Kernel too."""
    first = next((i for i, f in enumerate(path) if p.cat[f] == "Kernel"), len(path))
    return all(p.cat[f] == "Kernel" for f in path[first:])


def tree_has(node, under):
    """A write-path function in the call tree below a FileOutputStream.write* node."""
    name = node.get("name", "")
    if under and name in WRITE_PATH:
        return True
    return any(tree_has(c, under or name.startswith(FOS)) for c in node.get("children", []))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="kernel_stacks_check")
    ap.add_argument("--why", action="store_true")
    ap.add_argument("path")
    a = ap.parse_args()
    if a.why:
        ks = Profile(a.path).extra("Kernel stacks")
        if ks is None:
            print("no 'Kernel stacks' group in meta.extra", file=sys.stderr)
            return 1
        print(ks.get("kernel frames unavailable", ""))
        return 0
    ck = Checker(a.label, verbose=True)
    check = ck.check

    p = Profile(os.path.join(a.path, "devnull.json.gz"))
    kc = p.cats[8] if len(p.cats) > 8 else {}
    check(kc.get("name") == "Kernel" and kc.get("subcategories") == ["Other", "System call", "Page fault"],
          f"category 8 is Kernel with Other, System call, Page fault: {kc}")
    writer = list(p.stacks("devnull-writer"))
    hits = [s for s in writer if write_path_sample(p, s)]
    check(len(hits) >= 5, f"devnull: {len(hits)} of {len(writer)} devnull-writer samples show "
          f"write-path kernel frames above native frames under {FOS}*")
    wrong_sub = {p.name[f] + "/" + p.sub[f] for s in hits for f in s
                 if p.cat[f] == "Kernel" and p.name[f] in WRITE_PATH and p.sub[f] != "System call"}
    check(not wrong_sub, f"devnull: the write path's kernel frames are 'System call': {sorted(wrong_sub)}")
    bad = [s for s in p.stacks() if not kernel_on_top(p, s)]
    check(not bad, f"devnull: Kernel frames are the leaf-most block in every sample ({len(bad)} are not)")
    ks = p.extra("Kernel stacks") or {}
    have = sum(1 for s in p.stacks() if any(p.cat[f] == "Kernel" for f in s))
    got = ks.get("samples with kernel frames", -1)
    check(got >= have > 0, f"devnull: 'Kernel stacks' says {got} samples with kernel frames, "
          f"the profile has {have}")

    cb = load_json(os.path.join(a.path, "pcli-samples.json")).get(
        "categoryBreakdown", {}).get("categories", [])
    kern = sum(c.get("samples", 0) for c in cb if c.get("name") == "Kernel")
    check(kern > 0, f"profiler-cli: devnull-writer has {kern} samples in the Kernel category")
    tree = load_json(os.path.join(a.path, "pcli-top-down.json")).get("regularCallTree", {})
    check(tree_has(tree, False),
          f"profiler-cli: the call tree has a write-path kernel function under {FOS}*")

    off = Profile(os.path.join(a.path, "devnull-off.json.gz"))
    kframes = sum(1 for s in off.stacks() if any(off.cat[f] == "Kernel" for f in s))
    why = (off.extra("Kernel stacks") or {}).get("kernel frames unavailable", "")
    check(kframes == 0 and "kstack=no" in why,
          f"devnull-off (kstack=no): {kframes} samples with Kernel frames; says: {why!r}")

    cached = Profile(os.path.join(a.path, "devnull-cached.json.gz"))
    how = [(ks.get("kallsyms read", ""), ks.get("kallsyms cache not used"))
           for ks in (ks, cached.extra("Kernel stacks") or {})]
    check(how[0][0].startswith("from /proc/kallsyms in ") and how[0][1] is None,
          f"devnull: kallsyms read from /proc/kallsyms, the cache used: {how[0]}")
    check(how[1][0].startswith("from the cache (FXAGENT_CACHE) in ") and how[1][1] is None,
          f"devnull-cached: kallsyms read from the cache: {how[1]}")
    kept = os.path.join(os.environ.get("FXAGENT_CACHE", ""), "kallsyms")
    mode = os.stat(kept).st_mode & 0o777 if os.path.isfile(kept) else None
    check(mode == 0o600, f"the kept symbols {kept} exist with mode 0600: {mode and oct(mode)}")
    named = sum(1 for s in cached.stacks() if any(cached.cat[f] == "Kernel" and
                                                  cached.name[f] in WRITE_PATH for f in s))
    check(named > 0, f"devnull-cached: {named} samples name write-path kernel frames")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
