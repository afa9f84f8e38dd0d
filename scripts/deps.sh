#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The one list of what fxagent needs from the system, and the one place that installs it.
#   scripts/deps.sh demo   what ./scripts/demo.sh needs: configure, build, run the demo
#   scripts/deps.sh test   the above and what ./scripts/test.sh needs to run every test
#   scripts/deps.sh --list demo|test   print the Debian packages (the README's manual list)
# Only what is missing is installed. As root: one `apt-get update` and one `apt-get install -y
# --no-install-recommends` of the missing Debian packages, then the npm package profiler-cli if
# it is missing (test only). Not root: prints the one command to run as root and exits 1.
# Exit 0 when everything is present (one line says so) or has been installed.
# Debian 12 (bookworm) packages; docs/SETUP.md says why each is there and why this Node.
set -euo pipefail

# configure (cmake, pkg-config, zlib, cJSON for fxprof, libelf for native symbols, libdw for
# cstack=dwarf's unwind tables, a JDK's jvmti.h and javac, libzip for fxprof sources' jars and
# src.zip), build, demo.
FX_DEPS_DEMO=(build-essential cmake pkg-config zlib1g-dev libcjson-dev libelf-dev
    openjdk-17-jdk-headless libdw-dev libzip-dev)
# Unit tests (Check, which links subunit), the checkers (python3), the jtreg suite, the fuzzers
# and sanitizers (clang and its runtime), the style and valgrind tests, and for the attach
# tests in namespaces pgrep (procps) and mount (not in a minimal root), and shellcheck for the
# quoting gate (style.shell_quoting: paths with spaces), and go for `go tool pprof`, the reader
# it.fxprof_convert checks fxprof's pprof output with, and protoc (protobuf-compiler) to decode
# the OTLP profiles fxprof writes (it.fxprof_convert_otlp).
FX_DEPS_TEST=(check libsubunit-dev python3 jtreg7 clang libclang-rt-dev clang-format valgrind
    procps mount shellcheck golang-go protobuf-compiler)
# The front-end's loader as a CLI (docs/PROFILE-FORMAT.md §17.1); 0.10.0 is the verified version.
FX_DEPS_NPM=@firefox-devtools/profiler-cli@0.10.0

fx_deps_usage() {
    echo "usage: scripts/deps.sh [--list] demo|test" >&2
    exit 2
}

fx_deps_installed() {
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

list=0
if [[ ${1:-} == --list ]]; then
    list=1
    shift
fi
[[ $# -eq 1 ]] || fx_deps_usage
case $1 in
demo) packages=("${FX_DEPS_DEMO[@]}") ;;
test) packages=("${FX_DEPS_DEMO[@]}" "${FX_DEPS_TEST[@]}") ;;
*) fx_deps_usage ;;
esac
profile=$1

# Node: a node already on PATH is kept (this project's machines have Node 20 from NodeSource,
# which bundles npm); otherwise Debian's nodejs and npm (Node 18; profiler-cli 0.10.0 works on
# it, docs/SETUP.md).
if [[ $profile == test ]]; then
    if ((list)) || ! command -v node >/dev/null; then
        packages+=(nodejs npm)
    elif ! command -v npm >/dev/null; then
        packages+=(npm)
    fi
fi
if ((list)); then
    echo "${packages[*]}"
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    fx_deps_installed "$p" || missing+=("$p")
done
npm_missing=0
if [[ $profile == test ]] && ! command -v profiler-cli >/dev/null; then
    npm_missing=1
fi

if ((${#missing[@]} == 0 && npm_missing == 0)); then
    echo "deps: everything $profile needs is installed"
    exit 0
fi

steps=()
if ((${#missing[@]})); then
    steps+=("apt-get update" "apt-get install -y --no-install-recommends ${missing[*]}")
fi
((npm_missing)) && steps+=("npm install -g $FX_DEPS_NPM")
if ((EUID != 0)); then
    joined=$(printf ' && %s' "${steps[@]}")
    echo "deps: missing for $profile:${missing[*]:+ ${missing[*]}}$( ((npm_missing)) && echo " profiler-cli (npm)")" >&2
    echo "deps: run this as root, then the same command again:" >&2
    echo "  ${joined# && }" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ((${#missing[@]})); then
    echo "deps: installing ${#missing[@]} Debian packages for $profile: ${missing[*]}"
    apt-get update </dev/null
    apt-get install -y --no-install-recommends "${missing[@]}" </dev/null
fi
if ((npm_missing)); then
    echo "deps: installing $FX_DEPS_NPM with npm (node $(node --version))"
    npm install -g "$FX_DEPS_NPM" </dev/null
fi
echo "deps: installed what $profile needs"
