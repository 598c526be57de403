#!/usr/bin/env bash
# Installs what graphloom needs to build, test and run on Debian 12 or 13:
#   1. the Debian packages (compiler, gRPC, METIS, CLI11, spdlog, GoogleTest, ...), with apt;
#   2. the project's virtual environment .venv at the repo root, with torch (libtorch for the
#      C++ build, the same torch for Python), numpy and pytest from requirements.txt.
# Idempotent: installs only what is missing, runs `apt-get update` first when something is.
# Uses sudo when not root. Non-interactive.
#
# Environment:
#   GRAPHLOOM_PYTHON       the interpreter the venv is made from (default: python3 on PATH)
#   GRAPHLOOM_TORCH_INDEX  a package index for torch, e.g. https://download.pytorch.org/whl/cpu
#                          or .../whl/cu126 (default: pip's configured indexes)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git time
  libmetis-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # Headers only, for the one file that constructs c10d's Gloo backend (ProcessGroupGloo.hpp
  # includes them): nothing links Debian's libgloo, libtorch carries its own Gloo
  # (docs/toolchain.md, "Gloo").
  libgloo-dev
  # graphloom's dense layers multiply on OpenBLAS's OpenMP build: the torch wheel's MKL runs
  # its slow generic path on AMD processors (docs/toolchain.md, "BLAS").
  libopenblas0-openmp
  clang-format
  iproute2                      # `ip netns`: the tests' two-host runs in network namespaces
  openssl                       # test certificates for the servers' TLS
  libssl-dev                    # HMAC for the trainers' Gloo pair handshake
  liburing-dev                  # io_uring reads of the disk feature source
)

python=${GRAPHLOOM_PYTHON:-python3}
# Debian's own python3 needs python3-venv for `python3 -m venv`; pyenv's and others have it.
if command -v "$python" >/dev/null && ! "$python" -m venv --help >/dev/null 2>&1; then
  packages+=(python3-venv)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} Debian packages already installed"
else
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

command -v "$python" >/dev/null || { echo "install-deps: no Python interpreter '$python' (set GRAPHLOOM_PYTHON)" >&2; exit 1; }
if [[ ! -x .venv/bin/python ]]; then
  echo "install-deps: making .venv from $("$python" --version 2>&1) ($(command -v "$python"))"
  "$python" -m venv .venv
fi
# pip looks nothing up when every requirement is already satisfied, so a second run is quick.
index_args=()
[[ -n "${GRAPHLOOM_TORCH_INDEX:-}" ]] && index_args=(--extra-index-url "$GRAPHLOOM_TORCH_INDEX")
.venv/bin/python -m pip install -q --disable-pip-version-check "${index_args[@]}" -r requirements.txt
echo "install-deps: .venv has torch $(.venv/bin/python -c 'import torch; print(torch.__version__)')"
