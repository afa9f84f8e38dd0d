#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds fxagent and runs every test (unit, integration on each JDK found, and any other suite
# registered with CTest). The exit code is ctest's.
# FXAGENT_TEST_JDKS=/path/jdk1:/path/jdk2 restricts the integration tests to those JDKs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2

echo "test: JDKs for the integration tests:"
bash tests/it/jdks.sh | sed 's/^/test:   /'
rc=0
ctest --test-dir build --output-on-failure -j2 || rc=$?
echo "test: JDKs used and skipped:"
bash tests/it/jdks.sh | sed 's/^/test:   /'
echo "test: ctest exit code $rc"
exit "$rc"
