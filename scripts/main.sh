#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build, and run `graphloom demo`:
# a generated 1M-node graph partitioned into 2 parts, 2 loopback machines each with a main and a
# backup graph server and a trainer, GraphSAGE trained data-parallel through the servers; it
# prints accuracy (against the features alone), seeds/s, time per stage and where the
# partition, checkpoint and metrics went (graphloom-demo/). Extra arguments go to the demo
# (e.g. --num-nodes 200000; `build/graphloom demo --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/graphloom demo --force "$@"
