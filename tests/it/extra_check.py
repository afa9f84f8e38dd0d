#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks rows of a profile's meta.extra: each option a recording was started with shows in its
own figures (issue 30: a start after a stop takes every option, views included).

usage: extra_check.py --label NAME FILE SPEC...
  SPEC  GROUP|ROW|=VALUE  the row's value is VALUE (compared as text)
        GROUP|ROW|~TEXT   the row's value contains TEXT
        GROUP|ROW|>N      the row's value is a number above N
        !GROUP            the profile has no group GROUP
"""
import argparse
import re
import sys

from profile_lib import Checker, Profile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("file")
    ap.add_argument("specs", nargs="+")
    a = ap.parse_args()
    ck = Checker(a.label)
    p = Profile(a.file)
    groups = {g["label"]: {e["label"]: e["value"] for e in g["entries"]}
              for g in p.doc["meta"].get("extra", [])}
    for spec in a.specs:
        if spec.startswith("!"):
            ck.check(spec[1:] not in groups, f"{a.file}: no group '{spec[1:]}'")
            continue
        m = re.fullmatch(r"([^|]+)\|([^|]+)\|([=~>])(.*)", spec)
        if not m:
            ck.fatal(f"bad spec {spec!r}")
        group, row, op, want = m.groups()
        got = groups.get(group, {}).get(row)
        ok = got is not None and (
            (op == "=" and str(got) == want) or (op == "~" and want in str(got)) or
            (op == ">" and isinstance(got, (int, float)) and got > float(want)))
        ck.check(ok, f"{a.file}: meta.extra '{group}' row '{row}' {op} {want!r}: got {got!r}")
    return ck.exit_code()


if __name__ == "__main__":
    sys.exit(main())
