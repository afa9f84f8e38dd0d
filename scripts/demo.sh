#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing (scripts/deps.sh demo: as root, else it prints the command and this
# stops), builds fxagent and profiles the bundled demo for 5 s: writes build/demo-profile.json.gz.
# JDK: $JAVA_HOME if it holds a usable JDK, else JDK 17, else the first JDK found in /usr/lib/jvm.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

./scripts/deps.sh demo
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2

source tests/it/jdks.sh
jdk=""
if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    major=$(fx_jdk_major "$JAVA_HOME")
    if [[ -n "$major" ]] && ((major >= FX_JDK_MIN_MAJOR)); then
        jdk=$JAVA_HOME
    else
        echo "demo: JAVA_HOME=$JAVA_HOME is not a JDK >= $FX_JDK_MIN_MAJOR, looking elsewhere"
    fi
fi
if [[ -z "$jdk" ]]; then
    fx_jdks_discover >/dev/null
    for i in "${!FX_JDK_HOMES[@]}"; do
        if [[ -z "$jdk" || ${FX_JDK_MAJORS[$i]} == 17 ]]; then
            jdk=${FX_JDK_HOMES[$i]}
            major=${FX_JDK_MAJORS[$i]}
            [[ $major == 17 ]] && break
        fi
    done
fi
[[ -n "$jdk" ]] || {
    echo "demo: no JDK found: set JAVA_HOME or install openjdk-17-jdk-headless" >&2
    exit 1
}

profile=$root/build/demo-profile.json.gz
rm -f "$profile"
echo "demo: JDK $major at $jdk, profiling the demo for 5 s"
set -x
"$jdk/bin/java" "-agentpath:$root/build/agent/libfxagent.so=interval=10ms,file=$profile" \
    -cp "$root/build/java-test/fxagent-demo.jar" fxagent.demo.Demo 5
{ set +x; } 2>/dev/null
[[ -s "$profile" ]] || {
    echo "demo: the agent wrote no profile at $profile" >&2
    exit 1
}
cat <<MSG

Profile: $profile

To view it, open https://profiler.firefox.com and drag and drop the file onto the page (or use
"Load a profile from file"). The file is read by your browser and not uploaded unless you
click Upload. Threads worker-1 and worker-2 are the demo's: worker-1 spends 50/30/20 % of its
CPU in Demo.alpha/beta/gamma, worker-2 all of it in Demo.hashing.
MSG
