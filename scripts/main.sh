#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build, generate the embedded
# default dataset and inspect it. (Becomes `graphloom train` once training lands.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
mkdir -p data
./build/graphloom generate planted --out data/default --force
./build/graphloom inspect data/default
