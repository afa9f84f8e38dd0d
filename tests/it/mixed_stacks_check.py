#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the profiles of mixed_stacks_test.sh (issue 16, native frames in cpu mode).

usage: mixed_stacks_check.py --label NAME RUN_DIR   (reads jni, deflate, jni-off .json.gz)
  jni:      of the samples whose stack holds JniBurn.burn, at least half have a Native frame
            named fxmixed_burn_cpu or Java_fxagent_mixed_JniBurn_burn above it (leaf side), at
            least 10; those with only the stop "[native: walk stopped (address in no executable
            mapping)]" above it are left out, as many as "Native stacks"
            counts walks stopped at an address in no mapping (libfxmixed.so loaded since the
            text map was read; a starved drain re-reads it late);
  deflate:  at least 5 samples have a zlib frame (a zlib function, or libz.so.1...+0x...) in
            the Native category above a Deflater.deflate* frame, and those frames' resource is
            a library (type 1) of the root libs array, with its path;
  both:     "Native stacks" in meta.extra counts as many samples with native frames as the
            profile holds at least (a "[native: ...]" stop mark alone is no native frame);
  deep-depth: (depth=50, the JNI burn under a 200-deep recursion) no stack over 50 frames; of
            the JniBurn.burn samples at least half are exactly 50 with "[truncated]" at the root
            and the C burn function above JniBurn.burn (at least 10; the unmapped walks left out as
            jni's); "[truncated]" nowhere else; Losses'
            "truncated stacks" counts them;
  jni (issue 32): of the JniBurn.burn samples at least 80 % have, rootward of MixedWorkload.main,
            JavaMain, jni_CallStaticVoidMethod, JavaCalls::call_helper and right under main the
            call stub (`call_stub`, HotSpot's name, a VM Stub frame), and start_thread (or
            clone3) as the root: the main thread's frames down to its start; "Native stacks"
            counts at least those walks (to the thread's start) and 4 frames each;
  upcall:   (Java -> JniBurn.upcall -> C -> CallStaticLongMethod -> JniBurn.javaBurn) of the
            javaBurn samples at least 70 % have only Native frames between JniBurn.upcall and
            javaBurn but for the call stub right under javaBurn (a VM Stub frame), among them
            Java_fxagent_mixed_JniBurn_upcall, fxmixed_call_java, jni_CallStaticLongMethod,
            JavaCalls::call_helper and call_stub in that order (those whose walk
            stopped as "unwind table not built yet" aside); "Native stacks"
            counts at least as many segments between Java frames;
  debugframe: of the JniBurn.debugFrame samples whose leaf is fxdf_level3, at least 70 % read
            JniBurn.debugFrame;Java_fxagent_mixed_JniBurn_debugFrame;fxdf_level1;fxdf_level2;
            fxdf_level3 (the library has .debug_frame CFI only, no frame pointers, and that in a
            separate debug file named by its .gnu_debuglink), and "Native
            stacks" names the unwind table of libfxdebugframe.so;
  jni-off:  no frame in the Native category, no "Native stacks" group (cstack=no);
  deflate-dwarf: of the samples under Deflater.deflateBytesBytes with zlib frames, at least half
            have Java_java_util_zip_Deflater_deflateBytesBytes right above it and the zlib frames
            above that, with no "[native: walk stopped" frame; the "Native stacks" group names
            an unwind table of the system's libz (frameless: its frame-pointer steps fail);
            its zlib frames without a symbol are named by their function's start (the FDE's):
            at most MAX_UNNAMED distinct "libz.so...+0x..." funcs (one per address before:
            20+ for 2 functions), and "Native stacks" counts the addresses so named;
  deflate-fp: where zlib is the system's libz.so (Debian's, no frame pointers), at least half of
            those samples have the "[native: walk stopped" gap instead (the old walk's limit).
"""
import os
import sys

from profile_lib import Profile, run_dir_args

MAX_UNNAMED = 12  # libz's static functions on deflate's path

ZLIB = {"deflate", "deflate_slow", "deflate_fast", "deflate_stored", "deflate_rle",
        "deflate_huff", "longest_match", "fill_window", "compress_block", "_tr_flush_block",
        "_tr_align", "_tr_stored_block", "send_tree", "build_tree", "pqdownheap", "gen_bitlen",
        "gen_codes", "scan_tree", "adler32", "adler32_z", "crc32", "crc32_z", "read_buf",
        "flush_pending", "deflateParams", "deflateReset"}


def native_above(p, path, java_pred, native_pred):
    """A Native frame matching native_pred above (leaf side of) a frame matching java_pred."""
    for i, f in enumerate(path):
        if java_pred(p.name[f]):
            return any(p.cat[g] == "Native" and native_pred(p.name[g]) for g in path[i + 1:])
    return False


UNMAPPED = "[native: walk stopped (address in no executable mapping)]"
# HotSpot's call stub (StubRoutines' "call_stub" blob, async-profiler's `call_stub` frame):
# between JavaCalls::call_helper and the Java frame it called (issue 32)
CALL_STUB = "call_stub"


def is_call_stub(p, f):
    return p.name[f] == CALL_STUB and p.cat[f] == "VM" and p.sub[f] == "Stub"


def stopped_unmapped(p, path):
    """A JniBurn.burn sample whose leaf walk stopped at once: the stop's frame its leaf, right
    over JniBurn.burn."""
    return (len(path) >= 2 and p.name[path[-1]] == UNMAPPED
            and p.name[path[-2]] == "fxagent.mixed.JniBurn.burn")


def main():
    run, ck = run_dir_args("mixed_stacks_check")
    check = ck.check

    jni = Profile(os.path.join(run, "jni.json.gz"))
    burn = [p for p in jni.stacks() if any(jni.name[f] == "fxagent.mixed.JniBurn.burn" for f in p)]
    named = [p for p in burn if native_above(
        jni, p, lambda n: n == "fxagent.mixed.JniBurn.burn",
        lambda n: n in ("fxmixed_burn_cpu", "Java_fxagent_mixed_JniBurn_burn"))]
    # A leaf walk that starts in a library loaded since the text map was last read stops at once
    # ("walk stopped: an address in no executable mapping", counted) and leaves only that stop's
    # frame (UNMAPPED) above JniBurn.burn until a drain pass re-reads the map. libfxmixed.so is
    # loaded right before the burn, and the jni run is the test's first JVM (the drain reads
    # every symbol table): measured at load 10 (JDK 17), the drain's longest gap was 5803 ms, 98
    # walks stopped so and 91 of 141 JniBurn.burn samples had nothing above it (no stop frame
    # then), 43 the C function. Those the counter covers are left out of the share; the C
    # function must still be seen in 10 samples at least.
    jni_unmapped = (jni.extra("Native stacks") or {}).get(
        "walk stopped: an address in no executable mapping", 0)
    bare = sum(1 for p in burn if stopped_unmapped(jni, p))
    # every walk so stopped shows its stop's frame (a walk stopped at the leaf once showed none)
    shown = sum(1 for s in jni.stacks() if any(jni.name[f] == UNMAPPED for f in s))
    check(shown >= jni_unmapped, f"jni: {shown} samples show '{UNMAPPED}', meta.extra counts "
          f"{jni_unmapped} such walks (each must show it)")
    excused = min(bare, jni_unmapped)
    check(len(named) >= 10 and 2 * len(named) >= len(burn) - excused,
          f"jni: {len(named)} of {len(burn)} JniBurn.burn samples show the C burn function above it "
          f"({bare} with only '{UNMAPPED}' above it, {jni_unmapped} walks stopped at an address in no mapping)")

    def below_main(p, path):
        names = [p.name[f] for f in path]
        if "fxagent.mixed.MixedWorkload.main" not in names:
            return False
        under = names[:names.index("fxagent.mixed.MixedWorkload.main")]
        # the call stub right under the first Java frame, JavaCalls::call_helper under it
        return ("JavaMain" in under and any(n.startswith("jni_CallStaticVoidMethod") for n in under)
                and len(under) >= 2 and under[-1] == CALL_STUB
                and under[-2].startswith("JavaCalls::call_helper")
                and under[0] in ("start_thread", "clone3", "__clone3"))
    whole = [p for p in burn if below_main(jni, p)]
    check(len(burn) >= 10 and 10 * len(whole) >= 8 * len(burn),
          f"jni: {len(whole)} of {len(burn)} JniBurn.burn samples show the main thread's native frames down to start_thread")
    jns = jni.extra("Native stacks") or {}
    walked = jns.get("samples walked below the Java frames", -1)
    started = jns.get("walk below the Java frames stopped: reached the thread's first frame (its start)", -1)
    below = jns.get("native frames below or between Java frames", -1)
    check(walked >= started >= len(whole) and below >= 4 * len(whole),
          f"jni: 'Native stacks' counts {walked} samples walked below the Java frames, {started} to the "
          f"thread's start, {below} frames; the profile shows {len(whole)} such main-thread stacks")

    # the drain's CPU reading symbol tables and naming addresses (issue 31: start-up priced)
    sym = str(jns.get("symbol tables and naming: drain thread CPU time", ""))
    named = sum(v for k, v in jns.items() if k.startswith("addresses named"))
    check(sym.endswith(" ms") and named > 0 and float(sym[:-3]) > 0,
          f"jni: 'Native stacks' prices naming {named} addresses: {sym!r} of drain CPU")

    # issue 31: the first JVM of the run reads the symbol tables and keeps them (FXAGENT_CACHE,
    # it_lib.sh: empty at the start); the next maps them, and the libjvm names checked below
    # (jni_CallStaticLongMethod, JavaCalls::call_helper) come from the mapped table
    wrote = jns.get("symbol tables written to the cache", 0)
    check(wrote >= 1 and jns.get("symbol tables mapped from the cache (FXAGENT_CACHE)", 0) == 0,
          f"jni: the first JVM wrote {wrote} symbol tables to an empty cache and mapped none: {jns}")
    up = Profile(os.path.join(run, "upcall.json.gz"))
    mapped = (up.extra("Native stacks") or {}).get("symbol tables mapped from the cache (FXAGENT_CACHE)", 0)
    check(mapped >= 1, f"upcall: the second JVM mapped {mapped} symbol tables from the cache (want >= 1)")
    want = ["Java_fxagent_mixed_JniBurn_upcall", "fxmixed_call_java", "jni_CallStaticLongMethod",
            "JavaCalls::call_helper", CALL_STUB]

    def between(p, path):
        names = [p.name[f] for f in path]
        if "fxagent.mixed.JniBurn.upcall" not in names or "fxagent.mixed.JniBurn.javaBurn" not in names:
            return False
        a = names.index("fxagent.mixed.JniBurn.upcall")
        b = names.index("fxagent.mixed.JniBurn.javaBurn")
        mid = path[a + 1:b]
        # Native frames, then the call stub (VM, Stub) right under javaBurn
        if len(mid) < 2 or any(p.cat[f] != "Native" for f in mid[:-1]) or not is_call_stub(p, mid[-1]):
            return False
        k = 0
        for f in mid:
            if k < len(want) and p.name[f].startswith(want[k]):
                k += 1
        return k == len(want)
    # A walk that stopped where libjvm's unwind table is not built yet (a frame-pointer step
    # failed in a JNI function; the build takes a second or more on a loaded machine) says so
    # at its root: honest, and not counted against the placement
    jb = [p for p in up.stacks() if any(up.name[f] == "fxagent.mixed.JniBurn.javaBurn" for f in p)
          and up.name[p[0]] != "[native: walk stopped (unwind table not built yet)]"]
    cb = [p for p in jb if between(up, p)]
    check(len(jb) >= 10 and 10 * len(cb) >= 7 * len(jb),
          f"upcall: {len(cb)} of {len(jb)} JniBurn.javaBurn samples show the C frames between JniBurn.upcall and it")
    ns = up.extra("Native stacks") or {}
    segs = ns.get("native segments between Java frames (JNI call-backs)", -1)
    check(segs >= len(cb), f"upcall: 'Native stacks' counts {segs} segments between Java frames, the profile shows {len(cb)}")

    dfp = Profile(os.path.join(run, "debugframe.json.gz"))
    chain = ["fxagent.mixed.JniBurn.debugFrame", "Java_fxagent_mixed_JniBurn_debugFrame",
             "fxdf_level1", "fxdf_level2", "fxdf_level3"]
    l3 = [p for p in dfp.stacks() if "fxagent.mixed.JniBurn.debugFrame" in [dfp.name[f] for f in p]
          and any(dfp.name[f] == "fxdf_level3" for f in p)]

    def whole_chain(p, path):
        names = [p.name[f] for f in path]
        i = names.index(chain[0])
        return names[i:i + len(chain)] == chain
    good = [p for p in l3 if whole_chain(dfp, p)]
    check(len(l3) >= 10 and 10 * len(good) >= 7 * len(l3),
          f"debugframe: {len(good)} of {len(l3)} fxdf_level3 samples read {';'.join(chain)}")
    ns = dfp.extra("Native stacks") or {}
    check(any(k.startswith("unwind table libfxdebugframe.so") for k in ns),
          "debugframe: 'Native stacks' names the unwind table of libfxdebugframe.so")

    dfl = Profile(os.path.join(run, "deflate.json.gz"))
    zl = [p for p in dfl.stacks() if native_above(
        dfl, p, lambda n: n.startswith("java.util.zip.Deflater.deflate"),
        lambda n: n in ZLIB or n.startswith("libz.so.1"))]
    check(len(zl) >= 5, f"deflate: {len(zl)} samples with zlib frames under Deflater.deflate*")
    zlib_libs = {(dfl.lib[f] or {}).get("path") for p in zl for f in p
                 if dfl.cat[f] == "Native" and (dfl.name[f] in ZLIB or dfl.name[f].startswith("libz.so.1"))}
    check(bool(zlib_libs) and None not in zlib_libs and all(zlib_libs),
          f"deflate: the zlib frames' resource is a library of the root libs array: {sorted(map(str, zlib_libs))}")

    for name, p in (("jni", jni), ("deflate", dfl)):
        ns = p.extra("Native stacks")
        # a native frame, not a walk's "[native: ...]" mark alone (a walk below the Java frames
        # that stopped at once leaves the mark and no frame: not a sample with native frames)
        have = sum(1 for s in p.stacks()
                   if any(p.cat[f] == "Native" and not p.name[f].startswith("[") for f in s))
        got = ns.get("samples with native frames", -1) if ns else -1
        check(ns is not None and got >= have,
              f"{name}: meta.extra 'Native stacks' says {got} samples with native frames, the profile has {have}")

    def chains(p):
        """(whole, gap, libs) over samples with zlib frames above Deflater.deflateBytesBytes:
        whole = the JNI function right above it, zlib frames above that, no gap frame."""
        whole = gap = 0
        libs = set()
        for s in p.stacks():
            idx = [i for i, f in enumerate(s) if p.name[f] == "java.util.zip.Deflater.deflateBytesBytes"]
            if not idx:
                continue
            above = s[idx[-1] + 1:]
            zl = [f for f in above if p.cat[f] == "Native" and
                  (p.name[f] in ZLIB or p.name[f].startswith("libz.so.1"))]
            if not zl:
                continue
            libs |= {(p.lib[f] or {}).get("name") for f in zl}
            if any(p.name[f].startswith("[native: walk stopped") for f in above):
                gap += 1
            elif (len(above) > 1 and p.name[above[0]] == "Java_java_util_zip_Deflater_deflateBytesBytes"
                  and above.index(zl[0]) > 0):
                whole += 1
        return whole, gap, libs

    dw = Profile(os.path.join(run, "deflate-dwarf.json.gz"))
    whole, gap, dw_libs = chains(dw)
    check(whole >= 5 and 2 * whole >= whole + gap,
          f"deflate cstack=dwarf: {whole} samples with zlib frames under "
          f"Java_java_util_zip_Deflater_deflateBytesBytes under Deflater.deflateBytesBytes, {gap} with a gap")
    tables = [k for k in (dw.extra("Native stacks") or {}) if k.startswith("unwind table lib")]
    if any(n and n.startswith("libz.so") for n in dw_libs):
        check(any(k.startswith("unwind table libz.so") for k in tables),
              f"deflate cstack=dwarf: the frameless system libz got an unwind table: {tables}")
    unnamed = {n for n in dw.name if n and n.startswith("libz.so") and "+0x" in n}
    if unnamed:
        named = (dw.extra("Native stacks") or {}).get(
            "addresses without a symbol named by their CFI function start", 0)
        check(len(unnamed) <= MAX_UNNAMED and named > 0,
              f"deflate cstack=dwarf: {len(unnamed)} unnamed libz funcs (at most {MAX_UNNAMED}), "
              f"{named} addresses named by their function's start: {sorted(unnamed)}")
    # The tables are built lazily by the drain (issue 31): the walk that first fails a
    # frame-pointer step in libz stops there with the named "not built yet" frame, counted; the
    # test's runs share one cache directory (it_lib.sh), so deflate-dwarf reads the table that
    # the default run (cstack=dwarf too) built, when libz's mapping is first seen (issue 32), and
    # none of its walks stops in libz for want of it.
    stop = "[native: walk stopped (unwind table not built yet)]"
    for name, q in (("deflate", dfl), ("deflate-dwarf", dw)):
        ns = q.extra("Native stacks") or {}
        libz = [k for k in ns if k.startswith("unwind table libz.so")]
        if not libz:
            continue
        pending = ns.get("walk stopped: unwind table not built yet (queued for the drain)", 0)
        # the walk below the Java frames stops with the same frame where its library's table
        # (libjvm's, libc's) is not there yet: counted apart, and more of them while a loaded
        # machine's drain builds or maps the tables late
        below = ns.get("walk below the Java frames stopped: unwind table not built yet (queued "
                       "for the drain)", 0)
        marked = sum(1 for s in q.stacks() if any(q.name[f] == stop for f in s))
        in_libz = sum(1 for s in q.stacks()
                      if any(q.name[f] == stop and (q.name[g] or "").startswith("libz.so")
                             for f, g in zip(s, s[1:])))
        # the deflate run builds libz's table, unless an earlier run of the test (jni: the
        # class loader's inflate at start-up) needed and kept it: then it reads it at the mapping
        preloaded = "read from the cache at its mapping" in str(ns[libz[0]])
        if name == "deflate" and not preloaded:
            check(pending >= 1 and 1 <= marked <= pending + below and in_libz >= 1,
                  f"{name}: the walks before libz's table existed: {pending} counted ({below} "
                  f"more below the Java frames), {marked} samples with the '{stop}' frame, "
                  f"{in_libz} of them in libz")
        else:
            check(preloaded and
                  ns.get("unwind tables read from the cache at their mapping (this JVM)", 0) >= 1
                  and in_libz == 0 and marked <= pending + below,
                  f"{name}: libz's table read from the cache an earlier run wrote, at its "
                  f"mapping: {ns[libz[0]]}; {in_libz} samples stopped in libz for want of it "
                  f"(0 wanted), {marked} with the '{stop}' frame ({pending} + {below} counted)")
    fp = Profile(os.path.join(run, "deflate-fp.json.gz"))
    whole, gap, libs = chains(fp)
    if any(n and n.startswith("libz.so") for n in libs):
        check(gap >= 5 and 2 * gap >= whole + gap,
              f"deflate cstack=fp with the system's libz {sorted(libs)}: {gap} samples with the "
              f"'[native: walk stopped' gap, {whole} without")
    else:
        print(f"{ck.label}: n/a: deflate cstack=fp: zlib is {sorted(map(str, libs))}, not the "
              f"system's frameless libz ({whole} whole chains, {gap} gaps)")

    deep = Profile(os.path.join(run, "deep-depth.json.gz"))
    lens = [len(s) for s in deep.stacks()]
    check(bool(lens) and max(lens) <= 50,
          f"deep-depth (depth=50): the longest of {len(lens)} stacks has {max(lens, default=0)} frames")
    cut = [s for s in deep.stacks() if any(deep.name[f] == "fxagent.mixed.JniBurn.burn" for f in s)]
    kept = [s for s in cut if len(s) == 50 and deep.name[s[0]] == "[truncated]"
            and native_above(deep, s, lambda n: n == "fxagent.mixed.JniBurn.burn",
                             lambda n: n in ("fxmixed_burn_cpu", "Java_fxagent_mixed_JniBurn_burn"))]
    # as jni's: the walks that met libfxmixed.so before the map was re-read left out
    deep_unmapped = (deep.extra("Native stacks") or {}).get(
        "walk stopped: an address in no executable mapping", 0)
    deep_bare = sum(1 for s in cut if stopped_unmapped(deep, s))
    check(len(kept) >= 10 and 2 * len(kept) >= len(cut) - min(deep_bare, deep_unmapped),
          f"deep-depth: {len(kept)} of {len(cut)} JniBurn.burn samples are 50 frames, "
          f"'[truncated]' at the root and the C burn function above JniBurn.burn ({deep_bare} "
          f"with only the stop above it, {deep_unmapped} walks stopped at an address in no mapping)")
    trunc = sum(1 for s in deep.stacks() if "[truncated]" in (deep.name[f] for f in s[1:]))
    check(trunc == 0, f"deep-depth: {trunc} stacks with '[truncated]' other than at the root")
    losses = (deep.extra("Losses") or {}).get("truncated stacks", 0)
    check(losses >= len(kept), f"deep-depth: Losses says {losses} truncated stacks, "
          f"the profile has at least {len(kept)}")

    off = Profile(os.path.join(run, "jni-off.json.gz"))
    native = sum(1 for s in off.stacks() if any(off.cat[f] == "Native" for f in s))
    check(native == 0 and off.extra("Native stacks") is None and sum(1 for _ in off.stacks()) > 0,
          f"jni-off (cstack=no): {native} samples with Native frames, no 'Native stacks' group")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
