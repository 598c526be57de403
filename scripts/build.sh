#!/usr/bin/env bash
# Configures and builds graphloom (Release) into ./build, then installs the Python package
# (python/graphloom + graphloom._C) into .venv. Safe to re-run: incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
# scikit-build-core reuses ./build (pyproject.toml), so this compiles nothing again; without
# build isolation, so that pip never fetches a torch of its own.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .
echo "build: graphloom $(.venv/bin/python -c 'import graphloom; print(graphloom.__version__)') installed in .venv"
