#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build, and train GraphSAGE on the
# embedded default dataset (generated in memory), printing validation and test accuracy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/graphloom train
