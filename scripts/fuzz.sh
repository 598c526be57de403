#!/usr/bin/env bash
# Fuzzing (a session's job, not CI's): builds the fuzz targets of fuzz/ with clang, libFuzzer
# and ASan + UBSan into build-fuzz/, then runs each for SECONDS (default 120) from its seed
# corpus. A crasher lands in fuzz/findings/<target>/: fix the decoder, then move the file into
# fuzz/corpus/<target>/, where every test run replays it (ctest -R fuzz.).
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: the fuzz/*_fuzzer.cpp names)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-120}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for source in fuzz/*_fuzzer.cpp; do targets+=("$(basename "$source" _fuzzer.cpp)"); done
fi

# clang, its libFuzzer runtime and its omp.h (Debian: clang, libclang-rt-<version>-dev and
# libomp-<version>-dev).
version="$(clang++ --version 2>/dev/null | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -1)"
if [ -z "$version" ] || ! compgen -G "/usr/lib/llvm-$version/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null ||
    ! compgen -G "/usr/lib/llvm-$version/lib/clang/*/include/omp.h" >/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y --no-install-recommends clang
  version="$(clang++ --version | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -1)"
  $sudo apt-get install -y --no-install-recommends "libclang-rt-${version}-dev" "libomp-${version}-dev"
fi
# One OpenMP runtime, torch's libgomp: clang's -fopenmp=libgomp links it and compiles the
# pragmas away (serial loops are all a fuzzer needs).
gomp="$(compgen -G ".venv/lib/python3*/site-packages/torch/lib/libgomp.so.1" | head -1)"

cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" -DGRAPHLOOM_FUZZ=ON -DGRAPHLOOM_BUILD_TESTS=OFF \
  -DGRAPHLOOM_BUILD_PYTHON=OFF -DGRAPHLOOM_BUILD_BENCH=OFF -DOpenMP_CXX_FLAGS=-fopenmp=libgomp \
  -DOpenMP_CXX_LIB_NAMES=gomp -DOpenMP_gomp_LIBRARY="$PWD/$gomp"
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/%/_fuzzer}"

export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for target in "${targets[@]}"; do
  work="build-fuzz/corpus/$target"
  findings="fuzz/findings/$target"
  mkdir -p "$work" "$findings"
  log="build-fuzz/$target.log"
  echo "== $target: $seconds s"
  if ! "build-fuzz/fuzz/${target}_fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 \
      -timeout=30 -artifact_prefix="$findings/" -print_final_stats=1 \
      "$work" "fuzz/corpus/$target" >"$log" 2>&1; then
    status=1
    echo "$target: FOUND a crash (see $log and $findings/)"
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | tr '\n' ' '
  echo
  rmdir "$findings" 2>/dev/null || true
done
exit $status
