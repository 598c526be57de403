// Google Benchmark micro-benchmarks of the sampling and gather kernels, each next to its
// reference in the same run: one-hop sampling vs. reading every neighbor (the lower bound of a
// column scan), random-row gather vs. a sequential copy of the same bytes, and gathers through
// caches that hold every row vs. the in-memory gather.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <cstring>

#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/io/generators.h"
#include "graphloom/sampling/local_neighbor_source.h"

namespace {

using namespace graphloom;

const io::Dataset& dataset() {
  static const io::Dataset data =
      io::generate_rmat({.scale = 18, .edge_factor = 16, .feat_dim = 128});
  return data;
}

at::Tensor random_seeds(int64_t count) {
  at::manual_seed(0);
  return at::randint(dataset().num_nodes(), {count}, at::kLong);
}

void BM_SampleNeighborsUniform(benchmark::State& state) {
  const at::Tensor seeds = random_seeds(state.range(0));
  const int64_t fanout = state.range(1);
  uint64_t key = 0;
  int64_t picks = 0;
  for (auto _ : state) {
    const auto out =
        sampling::sample_csc_neighbors(dataset().graph, seeds, fanout, {.random_key = ++key});
    picks += out.neighbors.numel();
    benchmark::DoNotOptimize(out.neighbors.data_ptr());
  }
  state.counters["edges/s"] =
      benchmark::Counter(static_cast<double>(picks), benchmark::Counter::kIsRate);
  state.counters["seeds/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * seeds.numel()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SampleNeighborsUniform)->Args({100000, 10})->Args({100000, 25})->UseRealTime();

void BM_SampleNeighborsWithReplacement(benchmark::State& state) {
  const at::Tensor seeds = random_seeds(state.range(0));
  uint64_t key = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(sampling::sample_csc_neighbors(
        dataset().graph, seeds, 10, {.replace = true, .random_key = ++key}));
  }
}
BENCHMARK(BM_SampleNeighborsWithReplacement)->Arg(100000)->UseRealTime();

// Reference: take every neighbor (fanout -1), the same random column accesses without the
// random choice.
void BM_AllNeighborsReference(benchmark::State& state) {
  const at::Tensor seeds = random_seeds(state.range(0));
  int64_t picks = 0;
  for (auto _ : state) {
    const auto out = sampling::sample_csc_neighbors(dataset().graph, seeds, -1, {});
    picks += out.neighbors.numel();
  }
  state.counters["edges/s"] =
      benchmark::Counter(static_cast<double>(picks), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AllNeighborsReference)->Arg(100000)->UseRealTime();

void BM_GatherRows(benchmark::State& state) {
  const at::Tensor& table = dataset().node_features.at("feat");
  const at::Tensor ids = random_seeds(state.range(0));
  at::Tensor out = at::empty({ids.numel(), table.size(1)}, table.options());
  for (auto _ : state) features::gather_rows(table, ids, out);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * out.nbytes());
}
BENCHMARK(BM_GatherRows)->Arg(100000)->UseRealTime();

// Caches holding every row of the table, against BM_GatherRows (the in-memory table): the
// static cache looks rows up in a dense row -> slot array and gathers with the table's kernel;
// SIEVE (any dynamic policy) through its hash index, a bucket read per row.
void gather_through_full_cache(benchmark::State& state, features::CachePolicy policy) {
  const at::Tensor& table = dataset().node_features.at("feat");
  const features::TensorFeatureSource backing({{"feat", table}});
  const int64_t rows = table.size(0);
  const features::CachedFeatureSource cache(backing, "feat",
                                            {.policy = policy,
                                             .capacity_bytes = static_cast<int64_t>(table.nbytes()),
                                             .static_rows = at::arange(rows, at::kLong)});
  if (policy != features::CachePolicy::kStatic) cache.gather("feat", at::arange(rows, at::kLong));
  cache.stats(/*reset=*/true);
  const at::Tensor ids = random_seeds(state.range(0));
  at::Tensor out = at::empty({ids.numel(), table.size(1)}, table.options());
  for (auto _ : state) cache.gather("feat", ids, out);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * out.nbytes());
  state.counters["hit_rate"] = cache.stats().hit_rate();
}
void BM_GatherThroughStaticCacheOfEveryRow(benchmark::State& state) {
  gather_through_full_cache(state, features::CachePolicy::kStatic);
}
BENCHMARK(BM_GatherThroughStaticCacheOfEveryRow)->Arg(100000)->UseRealTime();
void BM_GatherThroughSieveCacheOfEveryRow(benchmark::State& state) {
  gather_through_full_cache(state, features::CachePolicy::kSieve);
}
BENCHMARK(BM_GatherThroughSieveCacheOfEveryRow)->Arg(100000)->UseRealTime();

void BM_SequentialCopyReference(benchmark::State& state) {
  const at::Tensor& table = dataset().node_features.at("feat");
  const at::Tensor block = table.slice(0, 0, state.range(0)).contiguous();
  at::Tensor out = at::empty_like(block);
  for (auto _ : state) std::memcpy(out.data_ptr(), block.data_ptr(), block.nbytes());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * out.nbytes());
}
BENCHMARK(BM_SequentialCopyReference)->Arg(100000)->UseRealTime();

void BM_IndexSelectReference(benchmark::State& state) {
  const at::Tensor& table = dataset().node_features.at("feat");
  const at::Tensor ids = random_seeds(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(table.index_select(0, ids));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * ids.numel() * table.size(1) *
                          4);
}
BENCHMARK(BM_IndexSelectReference)->Arg(100000)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
