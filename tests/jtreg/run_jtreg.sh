#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# Runs fxagent's jtreg suite (java-test/jtreg) on one JDK, with the agent loaded into every test
# JVM, prints one line per test and exits non-zero if any test failed or erred.
#
#   tests/jtreg/run_jtreg.sh JDK_HOME [jtreg test selections, e.g. :compile jni/JniTest.java]
#
# Environment (defaults in brackets):
#   FXAGENT_BUILD          build directory [<repo>/build]
#   FXAGENT_LIB            the agent [$FXAGENT_BUILD/agent/libfxagent.so]
#   FXAGENT_ORACLE_JAR     fxagent.Oracle [$FXAGENT_BUILD/java-test/fxagent-oracle.jar]
#   FXAGENT_JTREG_NATIVE   directory of libfxjnitest.so [$FXAGENT_BUILD/java-test]
#   FXAGENT_JTREG_WORK     jtreg work and report directories [$FXAGENT_BUILD/jtreg/jdk<major>]
#   FXAGENT_JTREG_OPTS     extra agent options, appended after "quiet,file=..." [none]
#   FXAGENT_JTREG_CONC     tests run at once [2]
#   JTREG                  the jtreg launcher [jtreg]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [[ $# -lt 1 || ! -x "$1/bin/java" ]]; then
    echo "usage: $0 JDK_HOME [jtreg tests...]   (JDK_HOME must contain bin/java)" >&2
    exit 2
fi
jdk=$(realpath "$1")
shift

# shellcheck source=../it/jdks.sh
source "$repo/tests/it/jdks.sh"
major=$(fx_jdk_major "$jdk")
major=${major:-unknown}

build=${FXAGENT_BUILD:-$repo/build}
lib=${FXAGENT_LIB:-$build/agent/libfxagent.so}
jar=${FXAGENT_ORACLE_JAR:-$build/java-test/fxagent-oracle.jar}
native=${FXAGENT_JTREG_NATIVE:-$build/java-test}
work=${FXAGENT_JTREG_WORK:-$build/jtreg/jdk$major}
conc=${FXAGENT_JTREG_CONC:-2}
jtreg=${JTREG:-jtreg}

missing=0
for f in "$lib" "$jar" "$native/libfxjnitest.so"; do
    if [[ ! -f "$f" ]]; then
        echo "run_jtreg: missing $f (build first: cmake --build $build)" >&2
        missing=1
    fi
done
if ! command -v "$jtreg" >/dev/null 2>&1; then
    echo "run_jtreg: no jtreg launcher '$jtreg' on PATH" >&2
    missing=1
fi
((missing == 0)) || exit 2

lib=$(realpath "$lib")
jar=$(realpath "$jar")
native=$(realpath "$native")
mkdir -p "$work"
work=$(realpath "$work")
# Every test JVM writes its profile here on exit; one file per pid, so concurrent tests don't
# share a target. Cleared per run: they are only kept for looking into a failure.
profiles=$work/profiles
rm -rf "$profiles"
mkdir -p "$profiles"
agent_opts="quiet,file=$profiles/fx-%p.json.gz${FXAGENT_JTREG_OPTS:+,$FXAGENT_JTREG_OPTS}"

tests=("$@")
((${#tests[@]} > 0)) || tests=("$repo/java-test/jtreg")

echo "jtreg on JDK $major ($jdk), agent $lib=$agent_opts"
start=$(date +%s)
status=0
# jtreg itself runs on the JDK under test (>= 11 is all it needs); "cd" keeps relative test
# selections relative to the suite root. -javaoption (not -javaoptions, which jtreg splits at
# spaces) keeps an agent path with a space as one option. -agentvm: the tests are compiled in
# reused JVMs (not one javac JVM per test) and, all @run main/othervm, still run each in a JVM
# of its own with the agent (-javaoption is for those test JVMs only).
(cd "$repo/java-test/jtreg" && JTREG_JAVA="$jdk/bin/java" "$jtreg" \
    -jdk:"$jdk" -w:"$work/JTwork" -r:"$work/JTreport" -agentvm \
    -conc:"$conc" -timeoutFactor:"${FXAGENT_JTREG_TIMEOUT_FACTOR:-2}" \
    -javaoption:"-agentpath:$lib=$agent_opts" \
    -cpa:"$jar" -nativepath:"$native" \
    -retain:fail,error -v:fail,error,summary -report:executed \
    "${tests[@]}") || status=$?
elapsed=$(($(date +%s) - start))

summary=$work/JTreport/text/summary.txt
echo "---- jtreg on JDK $major: per test (${elapsed}s) ----"
if [[ -f "$summary" ]]; then
    sed 's/^/  /' "$summary"
fi
# jtreg exits 0 only if every selected test passed, and treats "no tests selected" as 0 too.
if ((status != 0)); then
    echo "jtreg on JDK $major: FAILED (jtreg exit $status); work dir $work/JTwork"
    exit 1
fi
echo "jtreg on JDK $major: all passed"
