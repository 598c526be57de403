#!/usr/bin/env bash
# Configures and builds graphloom (Release) into ./build. Safe to re-run: incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
