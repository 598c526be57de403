#!/usr/bin/env bash
# The C++ tests under a sanitizer, in their own build tree (after scripts/install-deps.sh):
#   scripts/test-sanitizers.sh address   ASan + UBSan: the unit tests of every module but
#                                        train (decoders and fuzz corpora, RPC, sampling,
#                                        features, loader, nn kernels, partitioning, the
#                                        runtime), in build-asan/; CI runs this from
#                                        scripts/test.sh. The trainer's and the CLI's tests,
#                                        above these kernels, run in the plain build only.
#   scripts/test-sanitizers.sh thread    TSan, the tests of the concurrent code: loader, feature
#                                        cache, thread pools, RPC client and server (build-tsan/)
# Any report fails the run. Extra arguments go to ctest (e.g. -R DataLoader).
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:?usage: scripts/test-sanitizers.sh address|thread [ctest arguments]}"
shift
case "$kind" in
  address) dir=build-asan
    targets=(base_test graph_test io_test sampling_test features_test loader_test nn_test
             partition_test distributed_rpc_test distributed_runtime_test distributed_graph_test)
    for source in fuzz/*_fuzzer.cpp; do targets+=("$(basename "$source" .cpp)"); done
    tests=(-L unit) ;;
  thread) dir=build-tsan
    targets=(base_test features_test loader_test distributed_rpc_test distributed_graph_test
             distributed_runtime_test)
    tests=(-R '^(DataLoader|BufferPool|CachedFeatureSource|CachedThreadPool|LargeBlockCache|GraphServiceTest|GraphServer|DistGraph|PulledRows|RendezvousStore|SharedMemory)\.') ;;
  *) echo "scripts/test-sanitizers.sh: expected address or thread, got '$kind'" >&2; exit 2 ;;
esac
# -O1 -g1 (line tables): reports with file and line, at a fraction of -O2 -g's compile time.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
  -DGRAPHLOOM_SANITIZE="$kind" -DGRAPHLOOM_BUILD_PYTHON=OFF -DGRAPHLOOM_BUILD_BENCH=OFF
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"
# Leaks: libtorch's and gRPC's process-lifetime singletons are never freed; not reported.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Thread leaks: gRPC's executor threads outlive main by design.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:report_thread_leaks=0:suppressions=$PWD/scripts/tsan.supp"
if [ "$kind" = thread ]; then export OMP_NUM_THREADS=1; fi
cd "$dir"
start=$SECONDS
ctest --output-on-failure --timeout 1800 -j "$(nproc)" "${tests[@]}" "$@"
echo "sanitizers ($kind): tests passed in $((SECONDS - start)) s"
