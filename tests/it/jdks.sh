# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Which JDKs the integration tests run on. Source it and call fx_jdks_discover, or run it:
#   bash tests/it/jdks.sh        prints one line per candidate (CMake parses these lines)
# Candidates: the colon-separated JDK homes in FXAGENT_TEST_JDKS if set, exactly those; else
# every /usr/lib/jvm/* directory. Each line is
#   JDK <major> at <path>: used
#   JDK <major|unknown> at <path>: skipped: <reason>
# A JDK is used if it has an executable bin/java, its major version is >= FX_JDK_MIN_MAJOR (the
# Java workloads are compiled with --release 11), it is not the same directory as an earlier one
# (realpath), and no earlier JDK has the same major (test names are per major).

FX_JDK_MIN_MAJOR=11

# Prints the major version of the JDK at $1 (17 for "17.0.15", 8 for "1.8.0_392"), or nothing.
fx_jdk_major() {
    local home=$1 ver=""
    if [[ -r "$home/release" ]]; then
        ver=$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$home/release" | head -n 1)
    fi
    if [[ -z "$ver" && -x "$home/bin/java" ]]; then
        ver=$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)
    fi
    ver=${ver#1.}
    ver=${ver%%[!0-9]*}
    [[ -n "$ver" ]] && printf '%s\n' "$ver"
}

# Fills FX_JDK_HOMES and FX_JDK_MAJORS (parallel arrays, homes are realpaths) and prints the
# used/skipped line of every candidate on stdout.
fx_jdks_discover() {
    FX_JDK_HOMES=()
    FX_JDK_MAJORS=()
    local -a candidates=()
    local -A seen_path=() seen_major=()
    if [[ -n "${FXAGENT_TEST_JDKS:-}" ]]; then
        IFS=: read -r -a candidates <<<"$FXAGENT_TEST_JDKS"
    else
        local d
        for d in /usr/lib/jvm/*; do
            [[ -d "$d" ]] && candidates+=("$d")
        done
    fi
    local c real major
    local -A listed=()
    for c in "${candidates[@]}"; do
        [[ -n "$c" ]] && listed[$c]=1
    done
    for c in "${candidates[@]}"; do
        [[ -z "$c" ]] && continue
        if [[ ! -d "$c" ]]; then
            echo "JDK unknown at $c: skipped: not a directory"
            continue
        fi
        if [[ ! -x "$c/bin/java" ]]; then
            echo "JDK unknown at $c: skipped: no bin/java"
            continue
        fi
        real=$(realpath "$c")
        major=$(fx_jdk_major "$real")
        if [[ "$real" != "$c" && -n "${listed[$real]:-}" ]]; then
            echo "JDK ${major:-unknown} at $c: skipped: resolves to $real, which is listed too"
        elif [[ -z "$major" ]]; then
            echo "JDK unknown at $c: skipped: cannot read its version (release file, java -version)"
        elif ((major < FX_JDK_MIN_MAJOR)); then
            echo "JDK $major at $c: skipped: major $major < $FX_JDK_MIN_MAJOR"
        elif [[ -n "${seen_path[$real]:-}" ]]; then
            echo "JDK $major at $c: skipped: same JDK as ${seen_path[$real]}"
        elif [[ -n "${seen_major[$major]:-}" ]]; then
            echo "JDK $major at $c: skipped: JDK $major already used (${seen_major[$major]})"
        else
            seen_path[$real]=$real
            seen_major[$major]=$real
            FX_JDK_HOMES+=("$real")
            FX_JDK_MAJORS+=("$major")
            echo "JDK $major at $real: used"
        fi
    done
}

# Fills FX_JDK_SPECS with "--jdk MAJOR=HOME" pairs for the benchmark drivers: of the homes given
# as arguments if any (a --jdk given on their command line), else of fx_jdks_discover's JDKs.
fx_jdk_specs() {
    FX_JDK_SPECS=()
    local h i
    if [[ $# -gt 0 ]]; then
        for h in "$@"; do
            FX_JDK_SPECS+=(--jdk "$(fx_jdk_major "$h")=$h")
        done
    else
        fx_jdks_discover >/dev/null
        for i in "${!FX_JDK_HOMES[@]}"; do
            FX_JDK_SPECS+=(--jdk "${FX_JDK_MAJORS[$i]}=${FX_JDK_HOMES[$i]}")
        done
    fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
    fx_jdks_discover
fi
