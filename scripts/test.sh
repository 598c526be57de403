#!/usr/bin/env bash
# The whole test suite, from a fresh clone: install what is missing, build, run ctest (the
# C++ tests and python/tests, which ctest runs with pytest), then the unit and integration
# tests again under ASan + UBSan in their own build (scripts/test-sanitizers.sh address).
# Tests that need ../shared/datasets report SKIPPED when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
.venv/bin/python -m pip install -q --disable-pip-version-check -r python/tests/requirements.txt
bash scripts/build.sh
(cd build && ctest --output-on-failure --timeout 900 -j "$(nproc)")
bash scripts/test-sanitizers.sh address
