#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing (scripts/deps.sh test: as root, else it prints the command and this
# stops), builds fxagent and runs every test (unit, integration on each JDK found, and any other
# suite registered with CTest). The exit code is ctest's.
#   ./scripts/test.sh [CTEST ARGS...]   e.g. -R '^unit\.' ; the arguments go to ctest
# FXAGENT_TEST_JDKS=/path/jdk1:/path/jdk2 restricts the integration tests to those JDKs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

./scripts/deps.sh test
echo "test: node $(node --version) at $(command -v node), profiler-cli $(profiler-cli --version)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFXAGENT_TESTS=ON
cmake --build build -j2

echo "test: JDKs for the integration tests:"
bash tests/it/jdks.sh | sed 's/^/test:   /'
rc=0
ctest --test-dir build --output-on-failure -j2 "$@" || rc=$?
echo "test: JDKs used and skipped:"
bash tests/it/jdks.sh | sed 's/^/test:   /'
echo "test: ctest exit code $rc"
exit "$rc"
