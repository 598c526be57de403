#!/usr/bin/env bash
# The CUDA variant of graphloom (issue 46), in ./build-cuda, against the CUDA torch of
# .venv-cuda (made here when missing, from requirements-cuda.txt). It builds and runs on a
# machine without a GPU: the CUDA code compiles, and its tests (ctest label `cuda`) report
# SKIPPED by name.
#
#   bash scripts/build-cuda.sh check   the test command's `cuda` stage: compiles the CUDA code
#                                      and the tests of the modules it serves, runs them
#   bash scripts/build-cuda.sh all     builds everything (the graphloom binary, benchmarks)
#
# Environment: GRAPHLOOM_PYTHON (interpreter the venv is made from, default python3),
# GRAPHLOOM_TORCH_INDEX (a package index for the CUDA torch), CUDA_HOME (the CUDA toolkit,
# default /usr/local/cuda), GRAPHLOOM_CUDA_ARCHITECTURES (default 80-real;90).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
[[ $mode == check || $mode == all ]] || { echo "build-cuda: mode must be check or all, got '$mode'" >&2; exit 2; }
cuda_home=${CUDA_HOME:-/usr/local/cuda}
if ! command -v nvcc >/dev/null && [[ ! -x $cuda_home/bin/nvcc ]]; then
  echo "build-cuda: no nvcc (not on PATH, not in $cuda_home/bin): install the CUDA toolkit or set CUDA_HOME" >&2
  exit 1
fi
python=${GRAPHLOOM_PYTHON:-python3}
if [[ ! -x .venv-cuda/bin/python ]]; then
  echo "build-cuda: making .venv-cuda from $("$python" --version 2>&1)"
  "$python" -m venv .venv-cuda
fi
index_args=()
[[ -n "${GRAPHLOOM_TORCH_INDEX:-}" ]] && index_args=(--extra-index-url "$GRAPHLOOM_TORCH_INDEX")
pip=(.venv-cuda/bin/python -m pip --disable-pip-version-check)
# A CUDA torch is several GB: take it from local disk (this project's machines have it), and
# download it only when GRAPHLOOM_TORCH_INDEX says where from.
if ! .venv-cuda/bin/python -c 'import torch' 2>/dev/null && [[ -z "${GRAPHLOOM_TORCH_INDEX:-}" ]]; then
  report=$(mktemp)
  "${pip[@]}" install -q --dry-run --report "$report" -r requirements-cuda.txt
  torch_url=$(.venv-cuda/bin/python -c 'import json, sys
for item in json.load(open(sys.argv[1]))["install"]:
    if item["metadata"]["name"] == "torch": print(item["download_info"]["url"])' "$report")
  rm -f "$report"
  if [[ -n $torch_url && $torch_url != file://* ]]; then
    echo "build-cuda: SKIPPED: the CUDA torch of requirements-cuda.txt is not on local disk" \
         "(pip would download $torch_url); set GRAPHLOOM_TORCH_INDEX to allow the download" >&2
    [[ $mode == check ]] && exit 0
    exit 1
  fi
fi
"${pip[@]}" install -q "${index_args[@]}" -r requirements-cuda.txt
torch_cuda=$(.venv-cuda/bin/python -c 'import torch; print(torch.version.cuda or "")')
[[ -n $torch_cuda ]] || { echo "build-cuda: the torch of .venv-cuda is not a CUDA build" >&2; exit 1; }
echo "build-cuda: torch $(.venv-cuda/bin/python -c 'import torch; print(torch.__version__)') (CUDA $torch_cuda)"

arch_args=()
[[ -n "${GRAPHLOOM_CUDA_ARCHITECTURES:-}" ]] && arch_args=(-DGRAPHLOOM_CUDA_ARCHITECTURES="$GRAPHLOOM_CUDA_ARCHITECTURES")
cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRAPHLOOM_CUDA=ON \
  -DGRAPHLOOM_PYTHON="$PWD/.venv-cuda/bin/python" -DGRAPHLOOM_BUILD_PYTHON=OFF "${arch_args[@]}" >/dev/null
if [[ $mode == all ]]; then
  cmake --build build-cuda -j "$(nproc)"
  exit 0
fi
# The CUDA tests and the CPU tests of the modules the CUDA code sits in, linked to the CUDA
# torch: a CUDA build on a machine without a GPU must pass them.
tests=(cuda_test base_test sampling_test features_test)
cmake --build build-cuda -j "$(nproc)" --target "${tests[@]}"
(cd build-cuda && ctest -L cuda --output-on-failure)
for t in "${tests[@]:1}"; do
  build-cuda/tests/$t --gtest_brief=1
done
