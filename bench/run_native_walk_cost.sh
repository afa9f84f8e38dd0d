#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The native walk's own CPU cost per walk (bench/native_walk_cost.c), one command:
#   bench/run_native_walk_cost.sh [BUILD_DIR] [WALKS] [fp|dwarf]   (defaults: build, 2000000,
#   fp; 3 runs)
# Needs BUILD_DIR/libfxcore.a (the normal build) and a JDK's include/ for jni.h (JAVA_HOME or
# the JDK 17 of the VM).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
walks=${2:-2000000}
mode=${3:-fp}
jdk=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
gcc -O2 -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer -I"$root/include" \
    -I"$root/agent/base" -I"$root/agent/sampling" -I"$jdk/include" -I"$jdk/include/linux" \
    "$root/bench/native_walk_cost.c" "$root/agent/sampling/native_walk.c" "$build/libfxcore.a" \
    -lelf -ldw -lstdc++ -lz -lpthread -lm -o "$bin"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
for _ in 1 2 3; do "$bin" "$walks" "$mode"; done
