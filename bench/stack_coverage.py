#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The stack-coverage benchmark of issue 20 (docs/BENCHMARKS.md "Stacks on everyday code"), run
by bench/run_stack_coverage.sh. Owns the runs, the javac workload's source selection and the
report; the figures of one fxagent profile come from tests/it/stack_shape_check.py --stats-only
(the same reading as the oracle).

Workloads, per JDK:
  mega   java-test/stacks (fxagent.stacks.Mega SECONDS), compiled here with that JDK's javac
         --release 11; thread "mega", caller fxagent.stacks.Mega.loop
  javac  that JDK's javac compiling that JDK's own java.base sources (lib/src.zip, or the zip given
         with --src-zip MAJOR=PATH): java/lang/*.java, java/lang/{annotation,invoke,ref,reflect}
         and java/util/** without java/util/jar (about 600 files, 10 s on the machine of
         docs/BENCHMARKS.md), with --patch-module java.base=<those sources>; thread "main",
         caller com.sun.tools.javac.main.Main.compile
  scalac Debian's scala package (/usr/share/scala-2.11, or --scala-home) compiling sources
         generated here (SCALAC_FILES files of case classes, pattern matches, implicits, for
         comprehensions and collection folds), on that JDK's java; thread "main", caller
         scala.tools.nsc.Global$Run.compile
Profilers: every --build LABEL=DIR (DIR/agent/libfxagent.so, mode=cpu interval=10ms), and
async-profiler (--async-profiler HOME: lib/libasyncProfiler.so, event=cpu interval=10ms, collapsed
output with thread names) when given. Runs are interleaved: each round runs every JDK x workload x
profiler once, in an order rotated per round. Medians and min-max over the rounds.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "tests", "it", "stack_shape_check.py")
WORKLOADS = {
    "mega": {"thread": "mega", "caller": r"(^|\.)fxagent\.stacks\.Mega\.loop(\(|$)"},
    "javac": {"thread": "main",
              "caller": r"(^|\.)com\.sun\.tools\.javac\.main\.Main\.compile(\(|$)"},
    "scalac": {"thread": "main", "caller": r"(^|\.)scala\.tools\.nsc\.Global\$Run\.compile"},
}
SCALAC_FILES = 60
SCALA_JARS = ("scala-compiler.jar", "scala-library.jar", "scala-reflect.jar")
# async-profiler's frames for a sample without a (complete) Java stack.
AP_FAILURES = re.compile(r"^\[(unknown|unknown_Java|not_walkable_Java|not_walkable_native|"
                         r"no_Java_frame|deoptimization|thread_exit|gc_active|safepoint|"
                         r"unknown_state|skipped frames.*)\]$")


def src_selected(name):
    """The javac workload's files inside src.zip (java.base/...)."""
    if not name.startswith("java.base/java/") or not name.endswith(".java"):
        return False
    if name.endswith("/package-info.java") or name.endswith("/module-info.java"):
        return False
    rel = name[len("java.base/"):]
    parts = rel.split("/")
    if parts[:2] == ["java", "lang"]:
        return len(parts) == 3 or parts[2] in ("annotation", "invoke", "ref", "reflect")
    return parts[:2] == ["java", "util"] and (len(parts) < 4 or parts[2] != "jar")


def prepare_javac(out, major, zpath):
    d = os.path.join(out, f"javac-src-{major}")
    listing = os.path.join(out, f"javac-files-{major}.txt")
    if not os.path.exists(listing):
        files = []
        with zipfile.ZipFile(zpath) as z:
            for n in z.namelist():
                if src_selected(n):
                    z.extract(n, d)
                    files.append(os.path.join(d, n))
        with open(listing, "w", encoding="utf-8") as f:
            f.write("\n".join(sorted(files)) + "\n")
    with open(listing, encoding="utf-8") as f:
        n = sum(1 for _ in f)
    return os.path.join(d, "java.base"), listing, n


def javac_argv(out, jdk, major, zpath, nfiles, agent=None):
    """javac on the first nfiles of the selection, its classes into OUT/javac-out (emptied),
    with -J<agent> when given (bench/drain_cost.py, bench/service_thread_cost.py)."""
    patch, files, _ = prepare_javac(out, major, zpath)
    short = os.path.join(out, f"files-{major}-{nfiles}.txt")
    with open(files, encoding="utf-8") as f, open(short, "w", encoding="utf-8") as g:
        g.write("\n".join(f.read().splitlines()[:nfiles]) + "\n")
    dest = os.path.join(out, "javac-out")
    subprocess.run(["rm", "-rf", dest], check=True)
    os.makedirs(dest)
    return ([os.path.join(jdk, "bin", "javac")] + (["-J" + agent] if agent else []) +
            ["--patch-module", f"java.base={patch}", "-d", dest, "-nowarn", "-Xlint:none",
             "-proc:none", "-implicit:none", "-XDignore.symbol.file", "@" + short])


def scala_source(i):
    """One generated Scala file: enough of the language that the compiler's phases all work."""
    return "\n".join([
        f"package gen{i % 8}",
        f"sealed trait Shape{i} {{ def area: Double }}",
        f"case class Circle{i}(r: Double) extends Shape{i} {{ def area = math.Pi * r * r }}",
        f"case class Rect{i}(w: Double, h: Double) extends Shape{i} {{ def area = w * h }}",
        f"object Ops{i} {{",
        f"  implicit class Rich{i}(val s: String) extends AnyVal {{ def twice: String = s + s }}",
        f"  def total(xs: List[Shape{i}]): Double = xs.map {{ case Circle{i}(r) => r; "
        f"case Rect{i}(w, h) => w + h }}.sum",
        "  def grouped[A](xs: Seq[A])(implicit o: Ordering[A]): Map[Boolean, Seq[A]] =",
        "    xs.sorted.groupBy(x => o.compare(x, xs.head) > 0)",
        f"  def fold(n: Int): Int = (1 to n).foldLeft(0)((a, b) => a + b * {i})",
        f"  def opt(x: Option[Int]): Int = x match {{ case Some(v) if v > {i} => v; "
        "case Some(v) => -v; case None => 0 }",
        "  def pairs = for { a <- List(1, 2, 3); b <- Vector(a, a * 2) if b % 2 == 0 } "
        "yield (a, b.toString)",
        "  def use = \"x\".twice.length + fold(10) + opt(Some(3)) + pairs.size + "
        f"total(List(Circle{i}(1), Rect{i}(2, 3))).toInt",
        "}", ""])


def prepare_scalac(out):
    d = os.path.join(out, "scalac-src")
    if not os.path.isdir(d):
        os.makedirs(d)
        for i in range(SCALAC_FILES):
            with open(os.path.join(d, f"Gen{i}.scala"), "w", encoding="utf-8") as f:
                f.write(scala_source(i))
    return sorted(os.path.join(d, n) for n in os.listdir(d))


def prepare_mega(out, major, home):
    classes = os.path.join(out, f"mega-classes-{major}")
    if not os.path.isdir(classes):
        src = os.path.join(ROOT, "java-test", "stacks", "fxagent", "stacks", "Mega.java")
        subprocess.run([os.path.join(home, "bin", "javac"), "--release", "11", "-g", "-d",
                        classes, src], check=True)
    return classes


def command(work, jdk, prof_opt, args, seconds):
    home = jdk["home"]
    if work == "mega":
        return [os.path.join(home, "bin", "java"), prof_opt, "-cp", jdk["mega"],
                "fxagent.stacks.Mega", str(seconds)]
    dest = os.path.join(args.out, f"{work}-out")
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    if work == "scalac":
        cp = ":".join(os.path.join(args.scala_home, "lib", j) for j in SCALA_JARS)
        return ([os.path.join(home, "bin", "java"), prof_opt, "-Xss8m", "-cp", cp,
                 "-Dscala.usejavacp=true", "scala.tools.nsc.Main", "-nowarn", "-d", dest] +
                jdk["scala_files"])
    return [os.path.join(home, "bin", "javac"), "-J" + prof_opt, "--patch-module",
            f"java.base={jdk['patch']}", "-d", dest, "-nowarn", "-Xlint:none", "-proc:none",
            "-implicit:none", "-XDignore.symbol.file", "@" + jdk["files"]]


def fx_figures(profile, work):
    w = WORKLOADS[work]
    p = subprocess.run([sys.executable, CHECK, "--profile", profile, "--thread", w["thread"],
                        "--stats-only", "--caller", w["caller"], "--out", profile + ".stats.json"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"stack_shape_check failed on {profile}: {p.stdout}{p.stderr}")
    with open(profile + ".stats.json", encoding="utf-8") as f:
        s = json.load(f)
    return {"samples": s["samples"], "no_stack_pct": s["no_stack_pct"],
            "failure_pct": s["failure_frame_pct"],
            "by_kind": s["no_stack_by_kind_pct"], "caller_pct": s.get("caller_pct", 0.0),
            "stub_leaf_pct": s["stub_leaf_pct"],
            "recovered_pct": s["recovered_pct"], "recovered_tops": s["recovered_tops"],
            "handler_mean_ns": s["handler"].get("mean CPU ns in handler per signal"),
            "handler_max_ns": s["handler"].get("max CPU ns in handler (timed signals)")}


def ap_figures(collapsed, work):
    """async-profiler's collapsed output with threads: 'thread-frame;...;leaf count' per line."""
    w = WORKLOADS[work]
    caller = re.compile(w["caller"])
    n = named = has_caller = stub = 0
    kinds = {}
    with open(collapsed, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            m = re.match(r"^\[(.*?)( tid=\d+)?\]$", frames[0])
            if not m or m.group(1) != w["thread"]:
                continue
            c = int(count)
            n += c
            names = [re.sub(r"_\[[a-z0-9]\]$", "", x).replace("/", ".") for x in frames[1:]]
            fail = next((x for x in names if AP_FAILURES.match(x)), None)
            if fail:
                kinds[fail] = kinds.get(fail, 0) + c
            else:
                named += c
            if any(caller.search(x) for x in names):
                has_caller += c
            if names and names[-1].endswith(" stub"):
                stub += c
    pct = (lambda v: round(100.0 * v / n, 2) if n else 0.0)
    return {"samples": n, "no_stack_pct": pct(n - named), "failure_pct": pct(n - named),
            "by_kind": {k: pct(v) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])},
            "caller_pct": pct(has_caller), "stub_leaf_pct": pct(stub)}


def run_one(args, rnd, jdk, work, prof):
    tag = f"r{rnd}-jdk{jdk['major']}-{work}-{prof['label']}"
    base = os.path.join(args.out, tag)
    if prof["kind"] == "fx":
        out = base + ".json.gz"
        opt = f"-agentpath:{prof['lib']}=mode=cpu,interval=10ms,file={out},quiet"
    else:
        out = base + ".collapsed"
        opt = (f"-agentpath:{prof['lib']}=start,event=cpu,interval=10ms,threads,collapsed,"
               f"file={out}")
    cmd = command(work, jdk, opt, args, args.seconds)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=args.out)
    elapsed = time.monotonic() - t0
    row = {"round": rnd, "jdk": jdk["major"], "work": work, "profiler": prof["label"],
           "elapsed_s": round(elapsed, 2), "rc": p.returncode, "cmd": cmd}
    if p.returncode != 0 or not os.path.exists(out):
        row["error"] = (p.stdout + p.stderr)[-2000:]
    else:
        row.update(fx_figures(out, work) if prof["kind"] == "fx" else ap_figures(out, work))
        if not args.keep:
            os.remove(out)
    return row


def med(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "–"
    m = statistics.median(vals)
    return f"{m:.1f} ({min(vals):.1f}–{max(vals):.1f})" if len(vals) > 1 else f"{m:.1f}"


def report(rows, labels, out):
    lines = ["| JDK | workload | profiler | runs | samples | no stack % | by kind (medians, %) "
             "| caller on stack % | stub leaf % | recovered % | handler mean CPU ns/signal "
             "| any failure frame % |",
             "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    keys = sorted({(r["jdk"], r["work"]) for r in rows}, key=lambda k: (k[0], k[1] != "mega"))
    for jdk, work in keys:
        for label in labels:
            rs = [r for r in rows if (r["jdk"], r["work"], r["profiler"]) == (jdk, work, label)
                  and "error" not in r]
            errs = sum(1 for r in rows if (r["jdk"], r["work"], r["profiler"]) ==
                       (jdk, work, label) and "error" in r)
            if not rs:
                if errs:
                    lines.append(f"| {jdk} | {work} | {label} | 0 ({errs} failed) | | | | | | | | |")
                continue
            kinds = sorted({k for r in rs for k in r["by_kind"]})
            by = "; ".join(f"{k} {statistics.median(r['by_kind'].get(k, 0.0) for r in rs):.1f}"
                           for k in kinds) or "–"
            fx = "handler_mean_ns" in rs[0]
            lines.append(
                f"| {jdk} | {work} | {label} | {len(rs)}{f' ({errs} failed)' if errs else ''} | "
                f"{statistics.median(r['samples'] for r in rs):.0f} | "
                f"{med([r['no_stack_pct'] for r in rs])} | {by} | "
                f"{med([r['caller_pct'] for r in rs])} | "
                f"{med([r.get('stub_leaf_pct') for r in rs])} | "
                f"{med([r['recovered_pct'] for r in rs]) if fx else '–'} | "
                f"{med([r['handler_mean_ns'] for r in rs]) if fx else '–'} | "
                f"{med([r.get('failure_pct') for r in rs])} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write(text)
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--jdk", action="append", required=True, help="MAJOR=HOME")
    ap.add_argument("--build", action="append", default=[], help="LABEL=BUILD_DIR")
    ap.add_argument("--async-profiler", default=None, help="async-profiler's home")
    ap.add_argument("--src-zip", action="append", default=[], help="MAJOR=PATH of src.zip")
    ap.add_argument("--scala-home", default="/usr/share/scala-2.11",
                    help="scalac workload: Debian's scala package's home")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=8.0, help="mega: CPU seconds per run")
    ap.add_argument("--workloads", default="mega,javac")
    ap.add_argument("--keep", action="store_true", help="keep every profile in --out")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = os.path.join(args.out, "results.jsonl")
    profs = []
    for b in args.build:
        label, _, d = b.partition("=")
        lib = os.path.join(d, "agent", "libfxagent.so")
        if not os.path.isfile(lib):
            sys.exit(f"stack_coverage: no {lib}")
        profs.append({"label": label, "kind": "fx", "lib": lib})
    if args.async_profiler:
        lib = os.path.join(args.async_profiler, "lib", "libasyncProfiler.so")
        if not os.path.isfile(lib):
            sys.exit(f"stack_coverage: no {lib}")
        profs.append({"label": "async-profiler", "kind": "ap", "lib": lib})
    labels = [p["label"] for p in profs]
    if args.report_only:
        with open(results, encoding="utf-8") as f:
            rows = [json.loads(x) for x in f]
        print(report(rows, list(dict.fromkeys(r["profiler"] for r in rows)), args.out))
        return 0
    if not profs:
        sys.exit("stack_coverage: nothing to measure (--build LABEL=DIR or --async-profiler)")
    zips = dict(z.split("=", 1) for z in args.src_zip)
    jdks = []
    works = args.workloads.split(",")
    for spec in args.jdk:
        major, _, home = spec.partition("=")
        jdk = {"major": major, "home": home}
        if "mega" in works:
            jdk["mega"] = prepare_mega(args.out, major, home)
        if "javac" in works:
            z = zips.get(major) or os.path.join(home, "lib", "src.zip")
            if not os.path.isfile(z):
                sys.exit(f"stack_coverage: JDK {major} has no {z} (a dangling link means its "
                         f"source package is not installed): pass --src-zip {major}=PATH")
            jdk["patch"], jdk["files"], n = prepare_javac(args.out, major, z)
            print(f"stack_coverage: JDK {major}: javac compiles {n} java.base sources of {z}",
                  file=sys.stderr)
        if "scalac" in works:
            jdk["scala_files"] = prepare_scalac(args.out)
        jdks.append(jdk)
    combos = [(j, w, p) for j in jdks for w in works for p in profs]
    rows = []
    with open(results, "a", encoding="utf-8") as f:
        for rnd in range(args.runs):
            k = rnd % len(combos)
            for jdk, work, prof in combos[k:] + combos[:k]:
                row = run_one(args, rnd, jdk, work, prof)
                rows.append(row)
                f.write(json.dumps(row) + "\n")
                f.flush()
                brief = {k: row.get(k) for k in ("samples", "no_stack_pct", "failure_pct", "caller_pct",
                                                 "recovered_pct", "elapsed_s", "error")}
                print(f"stack_coverage: round {rnd} JDK {jdk['major']} {work} {prof['label']}: "
                      f"{json.dumps(brief)[:300]}", file=sys.stderr)
    print(report(rows, labels, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
