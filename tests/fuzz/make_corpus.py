#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpora of the fuzz harnesses into tests/fuzz/corpus/<harness>/.

The seeds are small, readable starting points: option strings from the help text (valid and
typical mistakes), JVM text samples (modified UTF-8, CESU-8, invalid bytes), and programs for the
profile writer's op interpreter that build small but complete models. Regenerate with
    python3 tests/fuzz/make_corpus.py
(deterministic: the same files every time) and review the diff. File names are
<index>-<slug> so a failing seed is easy to find."""
import os
import re
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

OPTIONS = [
    "", "start", "stop", "dump", "status", "help", "quiet", "validate", "validate=report.json",
    "mode=cpu", "mode=itimer", "mode=wall", "engine=auto", "engine=perf", "engine=timer",
    "interval=10ms", "interval=100us", "interval=10s", "interval=500000ns", "depth=2048",
    "depth=1", "depth=65535", "file=fxagent-%p-%t.json.gz", "file=out-%n.json", "file=100%%.json",
    "loop=0", "loop=60s", "loop=1m", "loop=1h", "memory=64m", "memory=1g", "memory=1048576",
    "ring=256k", "ring=16K", "ring=64m",
    "start,interval=1ms,file=out-%p.json.gz",
    "dump,file=/tmp/fx-%p-%n.json.gz,quiet",
    "start,mode=wall,interval=5ms,depth=512,memory=256m,ring=1m,loop=30s,validate=v.json",
    "mode=cpu,engine=perf,interval=1ms",
    # typical mistakes: each must fail with one line naming the option
    "interval=10", "interval=1.5ms", "interval=10 ms", "interval=-1ms", "interval=50us",
    "interval=99999999999999999999s", "depth=0", "depth=65536", "depth=-1", "depth=2k",
    "intervl=10ms", "strat", "start,stop", ",start", "start,", "start,,quiet", "mode=",
    "mode=CPU", "file=", "file=%x.json", "file=out%", "quiet=1", "memory=64q", "memory=0.5g",
    "ring=1k", "interval=10ms,interval=20ms", "validate=", "=start", "start=now",
]

JVM_TEXT = [
    ("empty", b""), ("ascii", b"a"), ("method", b"com.example.App.compute"),
    ("signature", b"Ljava/lang/String;"), ("init", b"<init>"), ("lambda", b"lambda$main$0"),
    ("nul", b"\x00"), ("inner-nul", b"a\x00b"), ("controls", b"\x01\x1f\x7f"),
    ("escapes", b'quote" backslash\\ slash/'), ("short-escapes", b"tab\tnewline\ncr\r"),
    ("2-byte", "\u00e9".encode()), ("3-byte", "\u65e5\u672c\u8a9e".encode()),
    ("4-byte", "\U0001f600".encode()), ("replacement-char", "\ufffd".encode()),
    ("max-code-point", "\U0010ffff".encode()),
    ("mutf8-nul", b"\xc0\x80"), ("mutf8-nul-in-name", b"W\xc0\x80rker"),
    ("cesu8-pair", b"\xed\xa0\xbd\xed\xb8\x80"),
    ("jvm-thread-name", b"W\xc0\x80rker-\xed\xa0\xbd\xed\xb8\x80"),
    ("lone-high-surrogate", b"\xed\xa0\x80"), ("lone-low-surrogate", b"\xed\xb0\x80"),
    ("reversed-pair", b"\xed\xb8\x80\xed\xa0\xbd"), ("cut-pair-1", b"\xed\xa0\xbd\xed"),
    ("cut-pair-2", b"\xed\xa0\xbd\xed\xb8"), ("overlong-3", b"\xe0\x80\x80"),
    ("overlong-2", b"\xc1\xbf"), ("above-max", b"\xf4\x90\x80\x80"),
    ("f5-lead", b"\xf5\x80\x80\x80"), ("fe-ff", b"\xfe\xff"), ("lone-cont", b"\x80"),
    ("conts", b"\xbf\xbf"), ("cut-3", b"\xe2\x82"), ("cut-4", b"\xf0\x9f\x98"),
    ("cut-in-text", b"abc\xe2\x82def"), ("fffd-around-bad", b"\xef\xbf\xbd\xff\xef\xbf\xbd"),
    ("63-plain", b"x" * 63), ("mutf8-nuls", b"\xc0\x80" * 31 + b"!"),
    ("pairs-then-nul", b"\xed\xa0\xbd\xed\xb8\x80" * 10 + b"..\x00"),
]


# --- the profile writer's op interpreter (see fuzz_profile_writer.c: ops[] order) ---
OP_STRING, OP_FUNC, OP_FRAME, OP_STACK, OP_SAMPLE, OP_MARKER, OP_SCHEMA = 0, 2, 3, 4, 6, 8, 9
OP_THREAD, OP_COUNTER, OP_META, OP_CLOCK, OP_LABEL = 10, 11, 12, 13, 14
NONE, BAD = 0xFF, 0xFE


def u32(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def f64(v):
    return struct.pack("<d", v)


def blob(b, max_len):
    assert len(b) <= max_len
    return bytes([len(b)]) + b


def string(s):
    return bytes([OP_STRING]) + blob(s, 64)


def func(name, resource=NONE, source=NONE, line=-1, java=1):
    return bytes([OP_FUNC, name, resource, source]) + u32(line) + bytes([java])


def frame(fn, line=-1, cat=2, sub=1, depth=0):
    return bytes([OP_FRAME, fn]) + u32(line) + bytes([cat, sub, depth])


def stack(prefix, fr):
    return bytes([OP_STACK, prefix, fr])


def thread_add(name, tid=1, step=1000):
    return bytes([OP_THREAD]) + blob(name, 39) + u32(tid) + bytes([0, 0]) + u32(step)


def thread_op(what, name=b"", t=0, step=1000):
    tail = u32(step) if what == 2 else b""
    return bytes([OP_THREAD]) + blob(name, 39) + u32(7) + bytes([what, t]) + tail


def sample(t, st, step=10_000_000, cpu=9_000_000, weight=None):
    w = bytes([0]) if weight is None else bytes([255]) + u32(weight)
    return bytes([OP_SAMPLE, t, st]) + u64(cpu) + w + u32(step)


def schema(which):
    return bytes([OP_SCHEMA, which])


def marker(t, name, phase, cat, sch, start=1000, end=5000, strs=(0, 0), ints=(1, 2),
           dbls=(1.5, 0.25, 0.5)):
    vals = bytes([strs[0], strs[1]]) + u64(ints[0]) + u64(ints[1])
    vals += b"".join(f64(d) for d in dbls)
    return bytes([OP_MARKER, t, name, phase, cat, sch]) + u32(start) + u32(end) + vals


def counter_add(name, unit=b"bytes"):
    return bytes([OP_COUNTER, 0, 0]) + blob(name, 23) + blob(unit, 7)


def counter_sample(c, value, step=1000):
    return bytes([OP_COUNTER, c, 200]) + u32(step) + u64(value)


def meta(key, value):
    return bytes([OP_META, 0, key]) + blob(value, 23)


def meta_int(key, value):
    return bytes([OP_META, 1, key]) + u64(value)


def extra(group, label, value):
    return bytes([OP_META, 2, group]) + blob(label, 23) + blob(value, 23)


def clock(what, *args):
    return bytes([OP_CLOCK, what]) + b"".join(args)


def label(text, cat):
    return bytes([OP_LABEL]) + blob(text, 39) + bytes([cat])


def java_model():
    """main -> compute -> helper, in one thread, with two samples."""
    p = thread_add(b"main", 1)
    p += string(b"App.main") + string(b"App.compute") + string(b"app.jar") + string(b"App.java")
    p += func(0, 2, 3, 10) + func(1, 2, 3, 20)
    p += frame(0, 12) + frame(1, 25, 2, 3)
    p += stack(NONE, 0) + stack(0, 1)
    p += sample(0, 1) + sample(0, 0) + sample(0, NONE)
    return p


def writer_programs():
    progs = {"empty": b"", "one-thread": thread_add(b"main")}
    progs["java-stacks"] = java_model()
    progs["weights"] = java_model() + sample(0, 1, weight=3) + sample(0, 0)
    progs["cpu-unknown"] = java_model() + sample(0, 1, cpu=-1) + sample(0, 1, cpu=1 << 40)
    progs["mutf8-names"] = (thread_add(b"W\xc0\x80rker-\xed\xa0\xbd\xed\xb8\x80") +
                            string(b"\xed\xa0\xbd\xed\xb8\x80") + string(b"\xff\xfe") +
                            func(0) + func(1, 0) + frame(0) + stack(NONE, 0) + sample(0, 0))
    progs["markers"] = (java_model() + schema(0) + schema(1) + marker(0, 0, 0, 2, 0) +
                        marker(0, 1, 1, 4, 1) + marker(0, 0, 2, 6, NONE) +
                        marker(0, 1, 3, 6, NONE, start=0, end=9000))
    progs["markers-unsorted"] = (java_model() + schema(0) +
                                 marker(0, 0, 1, 2, 0, start=50_000_000, end=1) +
                                 marker(0, 1, 0, 2, NONE, start=1) +
                                 marker(0, 0, 3, 2, NONE, start=0, end=1))
    progs["marker-doubles"] = (java_model() + schema(0) +
                               marker(0, 0, 0, 2, 0, dbls=(float("nan"), float("inf"), 1e300)) +
                               marker(0, 0, 0, 2, 0, dbls=(-0.0, 5e-324, -9.3e18)))
    progs["bad-schema"] = java_model() + schema(2) + schema(0) + marker(0, 0, 0, 2, 0)
    progs["bad-ids"] = (java_model() + func(BAD) + frame(BAD) + frame(0, cat=7) +
                        frame(0, cat=0, sub=3) + stack(BAD, 0) + sample(BAD, 0) + sample(0, BAD) +
                        marker(0, BAD, 0, 2, NONE) + marker(0, 0, 4, 2, NONE) +
                        marker(0, 0, 0, 7, NONE))
    progs["threads"] = (thread_add(b"main", 1) + thread_add(b"GC Thread#0", 2) +
                        thread_add(b"C2 CompilerThread0", 3) + thread_op(1, b"renamed", 1) +
                        thread_op(2, t=2) + thread_op(3, t=1) + string(b"f") + func(0) + frame(0) +
                        stack(NONE, 0) + sample(1, 0) + sample(2, 0) + sample(2, 0))
    progs["many-threads"] = b"".join(thread_add(b"t%d" % i, i) for i in range(10))
    progs["counters"] = (thread_add(b"main") + counter_add(b"Java heap used") +
                         counter_sample(0, 1 << 20) + counter_sample(0, 1 << 19) +
                         counter_sample(0, -(1 << 62)) + counter_sample(0, (1 << 63) - 1) +
                         counter_add(b"Loaded classes", b"") + counter_sample(1, 17) +
                         counter_sample(BAD, 1))
    progs["meta"] = (meta(0, b"fxagent") + meta(1, b"java -jar app.jar") + meta(2, b"Linux") +
                     meta(5, b"\xc0\x80cpu") + meta(6, b"bogus") + meta_int(0, 8) +
                     meta_int(2, 1 << 34) + meta_int(3, 1) + extra(0, b"JVM", b"17.0.9") +
                     extra(0, b"JVM", b"replaced") + extra(1, b"GC", b"G1") +
                     bytes([OP_META, 3, 1]) + blob(b"pid", 23) + u64(4242))
    progs["clock"] = (clock(0, f64(1.7e12), u64(3_000_000_000)) +
                      clock(1, u32(1000), bytes([1]), u32(90_000_000)) +
                      clock(2, u32(500)) + clock(3, u64(12345)) + java_model())
    progs["negative-start"] = clock(0, f64(0.0), u64(1 << 61)) + java_model()
    progs["label-stacks"] = (thread_add(b"main") + label(b"[AGCT: GC active]", 4) +
                             label(b"[AGCT: not walkable]", 0) + label(b"[unknown]", 7) +
                             sample(0, 0) + sample(0, 1))
    progs["deep-stack"] = (thread_add(b"main") + string(b"r") + func(0) + frame(0) +
                           stack(NONE, 0) + b"".join(stack(i, 0) for i in range(40)) +
                           sample(0, 40))
    progs["time-back"] = java_model() + sample(0, 0, step=0xF00FFFFF) + sample(0, 1, step=1)
    # op bytes >= 0xF0 make one allocation of that op fail; a last byte >= 0xF8 fails the write
    progs["alloc-failures"] = (thread_add(b"main") + bytes([0xF0 + OP_STRING % 16]) +
                               blob(b"x", 64) + java_model() + bytes([0xF0 + 2]) +
                               bytes([0, NONE, NONE]) + u32(1) + bytes([1]) + b"\xf9")
    return progs


def write_dir(name, items):
    d = os.path.join(HERE, "corpus", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for i, (slug, data) in enumerate(items):
        slug = re.sub(r"[^A-Za-z0-9]+", "_", slug).strip("_")[:40] or "empty"
        with open(os.path.join(d, "%02d-%s" % (i, slug)), "wb") as f:
            f.write(data)


def main():
    write_dir("options", [(s, s.encode()) for s in OPTIONS])
    write_dir("json_string", JVM_TEXT)
    write_dir("profile_writer", sorted(writer_programs().items()))


if __name__ == "__main__":
    main()
