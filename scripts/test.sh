#!/usr/bin/env bash
# The whole test suite, from a fresh clone: install what is missing, build, run ctest (the
# C++ tests and python/tests, which ctest runs with pytest), then the unit and integration
# tests again under ASan + UBSan in their own build (scripts/test-sanitizers.sh address), and
# compiles the CUDA code against the CUDA torch, running its tests (scripts/build-cuda.sh
# check: SKIPPED without a GPU), so that a broken kernel fails the suite.
# Tests that need ../shared/datasets report SKIPPED when it is absent.
# Ends with one line of seconds per stage, so that drift shows at once, and one line of the
# tests that passed, failed and were skipped over every ctest run of every stage.
# The CUDA stage runs before the others' ctest: its ctest (every test SKIPPED without a GPU)
# must not be the last test run printed, which CI reads as "no test ran".
set -euo pipefail
cd "$(dirname "$0")/.."
times=()
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
stage() {  # stage NAME COMMAND...: runs it, keeps its output and records its seconds
  local name=$1 start=$SECONDS
  shift
  "$@" 2>&1 | tee "$logs/$name.log"
  times+=("$name $((SECONDS - start)) s")
}
tally() {  # sums ctest's "N tests failed out of T" and its "(Skipped)" lines over all stages
  awk '/tests failed out of/ { total += $NF; failed += $(NF - 5) }
       /^[[:space:]]+[0-9]+ - .* \(Skipped\)$/ { skipped++ }
       END { printf "test.sh: %d passed, %d failed, %d skipped\n",
                    total - failed - skipped, failed, skipped }' "$logs"/*.log
}
install() {
  bash scripts/install-deps.sh
  .venv/bin/python -m pip install -q --disable-pip-version-check -r python/tests/requirements.txt
}
stage install install
stage build bash scripts/build.sh
stage cuda bash scripts/build-cuda.sh check
stage ctest bash -c 'cd build && ctest --output-on-failure --timeout 900 -j "$(nproc)"'
stage sanitizers bash scripts/test-sanitizers.sh address
echo "test.sh stages: ${times[*]/%/ |} total $SECONDS s"
tally
