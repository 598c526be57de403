#!/usr/bin/env bash
# Installs every Debian 12 package graphloom needs to build, test and run.
# Idempotent: installs only what is missing, runs `apt-get update` first when something is.
# Uses sudo when not root. Non-interactive.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git time
  libtorch-dev libgloo-dev
  libopenblas0-pthread          # libtorch's matmul is ~20x slower with reference BLAS
  libmetis-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-numpy                 # ../shared/bench/make_bench_graph.py
  openssl                       # test certificates for the servers' TLS
  libssl-dev                    # HMAC for the trainers' Gloo pair handshake
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
