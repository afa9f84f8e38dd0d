# SPDX-License-Identifier: Apache-2.0
"""What the share checks of tests/it have in common (demo_shares.py, inline_split_check.py,
stack_shape_check.py): counting a method's samples both in fxcheck's summary and in the JSON
that profiler_cli.sh's pcli_thread_json wrote, the Idle samples of a thread, the split the
workload measured itself, and the list of failed assertions that ends in the run's result file.
The two readers must agree exactly."""
import json
import os
import re

failures = []


def check(ok, msg):
    if not ok:
        failures.append(msg)
        print("FAIL: " + msg)
    return ok


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def fx_total(funcs, pattern):
    """Samples whose stack holds a func matching pattern, from fxcheck --summary-json's funcs
    (summed over the matching funcs)."""
    return sum(f["total"] for f in funcs if re.search(pattern, f["name"]))


def pcli_total(functions, pattern):
    """The same from the "functions" list of profiler-cli thread functions --json."""
    return sum(f["totalSamples"] for f in functions if re.search(pattern, f["name"]))


def workload_split(run, name, regex):
    """The percentages the workload printed about itself (regex's groups in run/name, a file of
    its stdout), as floats; None when the file or the line is missing."""
    try:
        with open(os.path.join(run, name), encoding="utf-8") as f:
            m = re.search(regex, f.read())
    except OSError:
        return None
    return [float(x) for x in m.groups()] if m else None


def idle_samples(samples_json):
    """Samples in the Idle category, from profiler-cli thread samples --json."""
    for c in samples_json["categoryBreakdown"]["categories"]:
        if c["name"] == "Idle":
            return c["samples"]
    return 0


def finish(run, name, result):
    """Writes result and the failures to run/name; the exit status is the number of failures."""
    result["failures"] = failures
    with open(os.path.join(run, name), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    return min(len(failures), 100)
