#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes small JFR recordings into tests/fuzz/corpus/jfr/: the seeds of fuzz_jfr and the
input of tests/unit/test_jfr.c (issue 35). A JVM's recording is 100+ KB of metadata; these are
built by hand from the format (chunk header, metadata element tree, constant pools, events)
with the types the converter reads and every string encoding, so their decoded values are
known:
  01-small.jfr   one chunk: 2 threads, 3 stacks (one truncated), 4 execution samples and a
                 native method sample, and a test.Strings event with a Latin-1, a char array,
                 a pool, an empty and a null string
  02-two.jfr     01's chunk twice (a recording of two chunks)
  03-renamed.jfr 01's chunk, then one a second later whose stacks have the same bytes but
                 whose method ids name other methods (main and work swapped, as two JVMs'
                 recordings concatenated): a stack known by its bytes must not be reused
Regenerate with python3 tests/fuzz/make_jfr_corpus.py (deterministic)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
TICKS = 1_000_000_000  # ticks per second: ticks are ns
START_NS = 1_700_000_000_000_000_000
START_TICKS = 5_000


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    for i in range(8):
        if v < 0x80:
            out.append(v)
            return bytes(out)
        out.append(0x80 | (v & 0x7F))
        v >>= 7
    out.append(v & 0xFF)
    return bytes(out)


def utf8(s):
    b = s.encode()
    return b"\x03" + varint(len(b)) + b


def latin1(s):
    b = s.encode("latin-1")
    return b"\x05" + varint(len(b)) + b


def chars(s):
    return b"\x04" + varint(len(s)) + b"".join(varint(ord(c)) for c in s)


def event(type_id, body):
    rest = varint(type_id) + body
    size = len(rest) + 1
    while len(varint(size)) + len(rest) != size:
        size = len(varint(size)) + len(rest)
    return varint(size) + rest


# (name, id, super, [(field, type id, constantPool, array)])
CLASSES = [
    ("long", 10, None, []), ("int", 11, None, []), ("boolean", 12, None, []),
    ("java.lang.String", 13, None, []),
    ("java.lang.Thread", 20, None, [("osName", 13, 0, 0), ("osThreadId", 10, 0, 0),
                                    ("javaName", 13, 0, 0), ("javaThreadId", 10, 0, 0)]),
    ("jdk.types.Symbol", 21, None, [("string", 13, 0, 0)]),
    ("java.lang.Class", 22, None, [("name", 21, 1, 0)]),
    ("jdk.types.Method", 23, None, [("type", 22, 1, 0), ("name", 21, 1, 0),
                                    ("descriptor", 21, 1, 0)]),
    ("jdk.types.FrameType", 24, None, [("description", 13, 0, 0)]),
    ("jdk.types.StackFrame", 25, None, [("method", 23, 1, 0), ("lineNumber", 11, 0, 0),
                                        ("type", 24, 1, 0)]),
    ("jdk.types.StackTrace", 26, None, [("truncated", 12, 0, 0), ("frames", 25, 0, 1)]),
    ("jdk.ExecutionSample", 30, "jdk.jfr.Event",
     [("startTime", 10, 0, 0), ("sampledThread", 20, 1, 0), ("stackTrace", 26, 1, 0)]),
    ("jdk.NativeMethodSample", 31, "jdk.jfr.Event",
     [("startTime", 10, 0, 0), ("sampledThread", 20, 1, 0), ("stackTrace", 26, 1, 0)]),
    ("test.Strings", 32, "jdk.jfr.Event",
     [("startTime", 10, 0, 0), ("a", 13, 0, 0), ("b", 13, 0, 0), ("c", 13, 0, 0),
      ("d", 13, 0, 0), ("e", 13, 0, 0)]),
    ("jdk.jfr.Label", 99, "java.lang.annotation.Annotation", [("value", 13, 0, 0)]),
]


def metadata():
    strings = []

    def s(x):
        if x not in strings:
            strings.append(x)
        return varint(strings.index(x))

    def element(name, attrs, children):
        out = s(name) + varint(len(attrs))
        for k, v in attrs:
            out += s(k) + s(v)
        return out + varint(len(children)) + b"".join(children)

    classes = []
    for name, cid, sup, fields in CLASSES:
        attrs = [("name", name), ("id", str(cid))] + ([("superType", sup)] if sup else [])
        if name in ("jdk.types.Symbol", "jdk.types.FrameType"):
            attrs.append(("simpleType", "true"))  # one field, read as its value
        kids = []
        for f, t, cp, arr in fields:
            fa = [("name", f), ("class", str(t))]
            if cp:
                fa.append(("constantPool", "true"))
            if arr:
                fa.append(("dimension", "1"))
            # an annotation under a field, as the JDK writes them: not a field
            kids.append(element("field", fa, [element("annotation", [("class", "99"), ("value", f)], [])]))
        if sup == "jdk.jfr.Event":  # settings belong to event types
            kids.append(element("setting", [("name", "enabled"), ("class", "13"),
                                            ("defaultValue", "true")], []))
        classes.append(element("class", attrs, kids))
    root = element("root", [], [element("metadata", [], classes),
                                element("region", [("locale", "en_US")], [])])
    table = varint(len(strings)) + b"".join(utf8(x) for x in strings)
    return event(0, varint(0) + varint(0) + varint(1) + table + root)


def pools(renamed=False):
    def pool(type_id, entries):
        return varint(type_id) + varint(len(entries)) + b"".join(
            varint(k) + v for k, v in entries)

    threads = [(1, utf8("os-main") + varint(101) + utf8("main") + varint(1)),
               (2, utf8("os-worker") + varint(102) + latin1("w\u00f6rker") + varint(2))]
    main, work = ("work", "main") if renamed else ("main", "work")
    symbols = [(1, utf8("com/example/App")), (2, utf8(main)), (3, utf8(work)),
               (4, utf8("read0")), (5, utf8("()V"))]
    klass = [(1, varint(1))]
    methods = [(m, varint(1) + varint(name) + varint(5)) for m, name in [(1, 2), (2, 3), (3, 4)]]
    ftypes = [(1, utf8("Interpreted")), (2, utf8("JIT compiled")), (3, utf8("Inlined")),
              (4, utf8("Native"))]

    def frame(method, line, ftype):
        return varint(method) + varint(line) + varint(ftype)

    stacks = [(1, b"\x00" + varint(2) + frame(2, 20, 2) + frame(1, 10, 1)),
              (2, b"\x01" + varint(1) + frame(2, 21, 3)),
              (3, b"\x00" + varint(2) + frame(3, -1 & 0xFFFFFFFF, 4) + frame(1, 11, 1))]
    strs = [(7, utf8("pooled"))]
    body = (varint(0) + varint(0) + varint(0) + b"\x01" + varint(8) + pool(20, threads)
            + pool(21, symbols) + pool(22, klass) + pool(23, methods) + pool(24, ftypes)
            + pool(26, stacks) + pool(13, strs) + pool(12, [(0, b"\x00")]))
    return event(1, body)


def samples():
    out = b""
    for t, th, st in [(100, 1, 1), (300, 2, 2), (200, 1, 1), (400, 2, 1)]:
        out += event(30, varint(START_TICKS + t) + varint(th) + varint(st))
    out += event(31, varint(START_TICKS + 500) + varint(2) + varint(3))
    out += event(32, varint(START_TICKS + 600) + latin1("caf\u00e9") + chars("\u03a9x")
                 + b"\x02" + varint(7) + b"\x01" + b"\x00")
    return out


def chunk(renamed=False):
    events = samples()
    meta = metadata()
    cp = pools(renamed)
    start_ns = START_NS + (1_000_000_000 if renamed else 0)
    meta_off = 68 + len(events)
    cp_off = meta_off + len(meta)
    size = cp_off + len(cp)
    header = (b"FLR\x00" + struct.pack(">HHqqqqqqq", 2, 0, size, cp_off, meta_off, start_ns,
                                       1_000_000, START_TICKS, TICKS) + b"\x00\x00\x00\x01")
    assert len(header) == 68
    return header + events + meta + cp


def main():
    out = os.path.join(HERE, "corpus", "jfr")
    os.makedirs(out, exist_ok=True)
    c = chunk()
    for name, data in [("01-small.jfr", c), ("02-two.jfr", c + c),
                       ("03-renamed.jfr", c + chunk(renamed=True))]:
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
