#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# FXCHECK as every it.* test calls it (it_lib.sh's it_init points FXCHECK here, the real one in
# IT_FXCHECK_REAL): the structural checker, which also holds Profile Info's "Samples in this
# file" against the file itself (rule totals); then, for each profile it passed, issue 30's
# "one total": totals_check.py (fxprof summary --json and the agent's exit line for the file
# agree with Profile Info). Its output is fxcheck's, so callers see no change.
set -u
"$IT_FXCHECK_REAL" "$@" || exit $?
for f in "$@"; do
    [[ $f != -* && -f $f ]] || continue
    python3 "$IT_DIR/totals_check.py" "$IT_FXPROF" "$f" "${FXAGENT_RUN_DIR:-.}" >&2 || exit 1
done
