#!/usr/bin/env bash
# The GPU check (issue 46): one script for the machine with a GPU (one H200, 16 cores: the
# `device` tool), under 8 minutes there. It builds the CUDA variant (scripts/build-cuda.sh all),
# runs the `cuda` tests (which then run instead of reporting SKIPPED), and prints, measured in
# this one run, on the 1M-node reference graphs (ER and R-MAT, ../shared/bench):
#   - the C++ sampler on every CPU thread against the tensor-op sampler on the GPU, the graph in
#     GPU memory and pinned in host memory (zero-copy), with the GPU's blocks checked against the
#     CPU's on a sample of batches;
#   - feature gathering onto the GPU by placement (cpu staging, pinned zero-copy, device) in
#     GB/s, against the CPU's own random-row gather;
#   - training seeds/s (GraphSAGE, bench train, 100 batches) on every CPU thread against the
#     GPU in fp32 and bf16, with the graph sampled on the host or on the GPU.
#
# Usage: bash scripts/gpu-check.sh [OUT_DIR]   (default: gpu-check/; logs and the table)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-check}
mkdir -p "$out"
data=${GRAPHLOOM_BENCH_DATA:-bench-data}
start=$SECONDS
bash scripts/install-deps.sh > "$out/install.log" 2>&1
bash scripts/build-cuda.sh all > "$out/build.log" 2>&1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
(cd build-cuda && ctest -L cuda --output-on-failure) 2>&1 | tee "$out/cuda-tests.log"
for kind in er rmat; do
  if [[ ! -f $data/$kind/metadata.json ]]; then
    .venv/bin/python ../shared/bench/make_bench_graph.py "$data/$kind" --kind "$kind" > "$out/make-$kind.log" 2>&1
  fi
done
gl=build-cuda/graphloom
for kind in er rmat; do
  echo "== $kind: sampling (fanouts 10,10,10, batch 1024)"
  $gl bench sample --data "$data/$kind" --batches 300 --device cuda 2>&1 | tee "$out/sample-$kind.log"
  echo "== $kind: feature gather onto the GPU"
  $gl bench gather --data "$data/$kind" --repeats 7 --device cuda 2>&1 | tee "$out/gather-$kind.log"
done
train_runs=("cpu fp32:--device cpu" "cuda fp32:--device cuda" "cuda bf16:--device cuda --precision bf16"
            "cuda bf16, graph on the GPU:--device cuda --precision bf16 --graph-placement device"
            "cuda bf16, graph pinned:--device cuda --precision bf16 --graph-placement pinned")
for kind in er rmat; do
  for run in "${train_runs[@]}"; do
    name=${run%%:*}
    echo "== $kind: training, $name"
    $gl bench train --data "$data/$kind" --batches 100 ${run#*:} 2>&1 |
      tee "$out/train-$kind-${name//[ ,]/_}.log"
  done
done
{
  echo "| graph | C++ sampler, CPU (seeds/s) | GPU sampler, graph in GPU memory | pinned graph (zero-copy) | GPU / CPU: device, pinned | blocks equal: device, pinned |"
  echo "| --- | --- | --- | --- | --- | --- |"
  for kind in er rmat; do
    cpu=$(grep -m1 'seeds/s' "$out/sample-$kind.log" | awk '{print $2}')
    cells=()
    for where in 'in its memory' 'pinned in host memory'; do
      line=$(grep -m1 "tensor-op sampler on .*graph $where" "$out/sample-$kind.log" || true)
      cells+=("$(sed -E 's/.*: ([0-9]+) seeds\/s.*/\1/' <<< "$line")"
              "$(sed -E 's/.*; ([0-9.]+)x the C\+\+ kernel.*/\1/' <<< "$line")x"
              "$(sed -E 's/.*in ([0-9]+ of [0-9]+) batches.*/\1/' <<< "$line")")
    done
    echo "| $kind | $cpu | ${cells[0]} | ${cells[3]} | ${cells[1]}, ${cells[4]} | ${cells[2]}, ${cells[5]} |"
  done
  echo
  echo "| graph | placement | GB/s | vs the CPU gather | rows equal |"
  echo "| --- | --- | --- | --- | --- |"
  for kind in er rmat; do
    grep -E '^  (cpu|pinned|device) ' "$out/gather-$kind.log" |
      awk -v k="$kind" '{print "| " k " | " $1 " | " $2 " | " $4 " | " $NF " |"}'
  done
  echo
  echo "| graph | training run | seeds/s | vs CPU fp32 |"
  echo "| --- | --- | --- | --- |"
  for kind in er rmat; do
    base=$(grep -m1 '^  seeds/s' "$out/train-$kind-cpu_fp32.log" | awk '{print $2}')
    for run in "${train_runs[@]}"; do
      name=${run%%:*}
      rate=$(grep -m1 '^  seeds/s' "$out/train-$kind-${name//[ ,]/_}.log" | awk '{print $2}')
      echo "| $kind | $name | $rate | $(awk -v a="$rate" -v b="$base" 'BEGIN { if (b > 0) printf "%.2fx", a / b }') |"
    done
  done
} | tee "$out/table.md"
echo "gpu-check: $((SECONDS - start)) s; logs in $out/"
