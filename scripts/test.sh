#!/usr/bin/env bash
# The whole test suite, from a fresh clone: install what is missing, build, run ctest.
# Tests that need ../shared/datasets report SKIPPED when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 -j "$(nproc)"
