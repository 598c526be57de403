#!/usr/bin/env bash
# Features bigger than memory, measured: trains a 3-layer GraphSAGE on an R-MAT graph whose
# feature table is several times a cgroup memory cap, once per feature storage (mmap; disk
# without a cache; disk behind each cache policy), every run under the same cap, and prints a
# Markdown table: seeds/s, MB read from disk per epoch, cache hit rate, share of the training
# thread's epoch spent waiting for batches, and the cgroup's peak (resident + page cache). Needs root (the cap is a
# cgroup: scripts/run-with-memory-limit.sh) and a build (bash scripts/build.sh).
#
# Environment (defaults: the issue's setting, 4.3 GB of features under a 1 GiB cap):
#   SCALE=22 FEAT_DIM=256   the graph: 2^SCALE nodes, 16 edges per node, FEAT_DIM fp32 features
#   LIMIT=1G                the memory cap of each run
#   CACHE=256M              the feature cache of the disk runs
#   BATCHES=20              batches per epoch (--max-batches; one epoch is timed)
#   FANOUTS=5,5,5 BATCH=512 sampling
#   DATA=bench-data/rmat-SCALE-FEAT_DIM   where the graph is kept (generated when absent)
#   RUNS="mmap disk sieve s3-fifo lru clock degree"   the runs, in order (a VM's host may cache
#                           what an earlier run read: reverse the order to see it)
# Usage: sudo scripts/bench-memory-capped.sh > capped.md
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${SCALE:-22}
feat_dim=${FEAT_DIM:-256}
limit=${LIMIT:-1G}
cache=${CACHE:-256M}
batches=${BATCHES:-20}
fanouts=${FANOUTS:-5,5,5}
batch=${BATCH:-512}
data=${DATA:-bench-data/rmat-$scale-$feat_dim}
graphloom=build/graphloom
[ -x "$graphloom" ] || { echo "bench-memory-capped: build first (bash scripts/build.sh)" >&2; exit 1; }
if [ ! -f "$data/metadata.json" ]; then
  echo "bench-memory-capped: generating $data (R-MAT scale $scale, $feat_dim features)" >&2
  "$graphloom" generate rmat --scale "$scale" --feat-dim "$feat_dim" --out "$data" >&2
fi
feat_bytes=$(stat -c %s "$data"/feat*.npy | head -1)

# One run under the cap: prints its table row. $1: the storage's name; the rest: train flags.
run() {
  local name=$1
  shift
  sync
  echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true  # each run starts with a cold page cache
  local out
  out=$(scripts/run-with-memory-limit.sh "$limit" "$graphloom" train --data "$data" --epochs 1 \
    --max-batches "$batches" --fanouts "$fanouts" --batch-size "$batch" --hidden 64 \
    --eval-every 0 --no-test --no-progress "$@" 2>&1) || {
    echo "| $name | failed: $(echo "$out" | tail -1) | | | | |"
    return
  }
  local seeds disk hits split peak
  seeds=$(echo "$out" | sed -n 's/.*epoch   1 .* \([0-9]*\) seeds\/s.*/\1/p' | tail -1)
  disk=$(echo "$out" | sed -n 's/.* disk \([0-9.]*\) MB.*/\1/p' | tail -1)
  hits=$(echo "$out" | sed -n 's/.*cache hits \([0-9.]*%\).*/\1/p' | tail -1)
  # The training thread's time: waiting for batches, forward, backward, optimizer.
  split=$(echo "$out" | sed -n 's/.*waiting for batches \([0-9.]*\)  forward \([0-9.]*\)  backward \([0-9.]*\)  optimizer \([0-9.]*\).*/\1 \2 \3 \4/p' | tail -1)
  peak=$(echo "$out" | sed -n 's/.*peak usage \([0-9]*\) MiB.*/\1/p' | tail -1)
  local share="-"
  [ -n "$split" ] && share=$(echo "$split" | awk '{ t = $1 + $2 + $3 + $4;
    printf "%.0f%%", (t > 0 ? 100 * $1 / t : 0) }')
  echo "| $name | ${seeds:--} | ${disk:-page faults} | ${hits:--} | $share | ${peak:--} |"
}

echo "R-MAT scale $scale ($(awk -v b="$feat_bytes" 'BEGIN { printf "%.2f", b / 1e9 }') GB of" \
  "features), cap $limit, cache $cache, fanouts $fanouts, batch $batch, $batches batches," \
  "3-layer SAGE (hidden 64), $(nproc) cores"
echo
echo "| storage | seeds/s | disk MB / epoch | cache hit rate | waiting for batches | peak MiB (cgroup) |"
echo "|---|---|---|---|---|---|"
for what in ${RUNS:-mmap disk sieve s3-fifo lru clock degree}; do
  case $what in
    mmap) run "mmap" --feature-storage mmap ;;
    disk) run "disk, no cache" --feature-storage disk ;;
    *) run "disk + $what" --feature-storage disk --cache-policy "$what" --cache-size "$cache" ;;
  esac
done
