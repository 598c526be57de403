#!/usr/bin/env bash
# Regenerates every table of docs/benchmarks.md in one run (about 30 minutes on 2 cores):
# makes the two reference graphs if missing (../shared/bench/make_bench_graph.py: ER and R-MAT,
# 1M nodes, 20M edges, 128 features), then runs scripts/bench_all.py, which prints the tables
# as Markdown to stdout (progress and errors to stderr).
#
# Environment:
#   GRAPHLOOM_BENCH_DATA  where the reference graphs are kept (default: bench-data/)
#   GRAPHLOOM_DGL         a directory holding an importable DGL, for the DGL columns (e.g.
#                         `pip install --target DIR --no-deps dgl==2.1.0 scipy networkx ...`);
#                         without it those columns say "not run". Nothing is fetched or built.
# PyG's column of the Python loader runs where the venv's torch_geometric has a sampler.
# Usage: scripts/bench-all.sh > results.md    (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
data="${GRAPHLOOM_BENCH_DATA:-bench-data}"
maker=../shared/bench/make_bench_graph.py
[ -x build/graphloom ] || { echo "bench-all: build first (bash scripts/build.sh)" >&2; exit 1; }
mkdir -p "$data"
for kind in er rmat; do
  if [ ! -f "$data/$kind/metadata.json" ]; then
    [ -f "$maker" ] || { echo "bench-all: $maker is missing (needs ../shared)" >&2; exit 1; }
    echo "bench-all: writing the $kind reference graph into $data/$kind" >&2
    .venv/bin/python "$maker" "$data/$kind" --kind "$kind" >&2
  fi
done
dgl=()
[ -n "${GRAPHLOOM_DGL:-}" ] && dgl=(--dgl "$GRAPHLOOM_DGL")
PYTHONPATH="$PWD/build/python${PYTHONPATH:+:$PYTHONPATH}" .venv/bin/python scripts/bench_all.py \
  --er "$data/er" --rmat "$data/rmat" --graphloom build/graphloom --python .venv/bin/python \
  --scratch "$data" "${dgl[@]}"
# The LABOR section: sampling on both graphs, accuracy on ../shared/datasets (SKIPPED rows
# where it is absent).
data=$(cd "$data" && pwd)
(cd scripts && ../.venv/bin/python bench_labor.py --er "$data/er" --rmat "$data/rmat" \
  --graphloom ../build/graphloom --datasets ../../shared/datasets)
