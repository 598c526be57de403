// The eviction policies of CachedFeatureSource on a sampled workload (cache_bench.h). The
// batches are sampled once and replayed through every cache, so each policy sees the same
// rows in the same order; the backing source is the table in memory, so the time is the
// cache's own cost (lookups, locks, copies), not a disk's.
#include "cache_bench.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "graphloom/base/error.h"
#include "graphloom/base/timer.h"
#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/tensor_feature_source.h"

namespace graphloom::benchmarks {
namespace {

struct PolicyFigures {
  features::CacheStats last_epoch;
  double seconds_per_batch = 0;
};

PolicyFigures replay(const features::FeatureSource& backing, const at::Tensor& degree_order,
                     features::CachePolicy policy, int64_t capacity_bytes,
                     const std::vector<std::vector<at::Tensor>>& inputs) {
  features::CacheOptions options{.policy = policy, .capacity_bytes = capacity_bytes};
  if (policy == features::CachePolicy::kStatic) options.static_rows = degree_order;
  const features::CachedFeatureSource cache(backing, "feat", options);
  PolicyFigures figures;
  Timer timer;
  int64_t batches = 0;
  for (const std::vector<at::Tensor>& epoch : inputs) {
    cache.stats(/*reset=*/true);
    for (const at::Tensor& ids : epoch) {
      cache.gather("feat", ids);
      ++batches;
    }
  }
  figures.seconds_per_batch = timer.seconds() / static_cast<double>(std::max<int64_t>(1, batches));
  figures.last_epoch = cache.stats();
  return figures;
}

}  // namespace

void bench_cache_policies(const io::Dataset& dataset, const sampling::NeighborSampler& sampler,
                          const std::vector<std::vector<at::Tensor>>& epochs,
                          const CacheBenchOptions& o) {
  GL_CHECK(dataset.node_features.count("feat"), "bench cache needs a node feature named 'feat'");
  const at::Tensor table = dataset.node_features.at("feat").contiguous();
  const features::TensorFeatureSource backing({{"feat", table}});
  const int64_t row_bytes = table.nbytes() / std::max<int64_t>(1, table.size(0));
  const int64_t capacity_bytes =
      static_cast<int64_t>(o.cache_fraction * static_cast<double>(table.size(0))) * row_bytes;
  std::vector<std::vector<at::Tensor>> inputs;
  int64_t rows_read = 0;
  for (std::size_t e = 0; e < epochs.size(); ++e) {
    inputs.emplace_back();
    for (std::size_t b = 0; b < epochs[e].size(); ++b) {
      inputs.back().push_back(sampler.sample(epochs[e][b], e, b).input_nodes());
      rows_read += inputs.back().back().numel();
    }
  }
  const at::Tensor degree_order =
      features::rows_by_reference_count(dataset.graph.indices, table.size(0));
  fmt::print(
      "cache: {:.0f}% of {} rows ({:.0f} MB of {} B rows), {} epoch(s) of {} batches, {:.0f} "
      "input rows per batch; hit rates of the last epoch\n",
      o.cache_fraction * 100, table.size(0), capacity_bytes / 1e6, row_bytes, epochs.size(),
      epochs.front().size(),
      static_cast<double>(rows_read) / static_cast<double>(epochs.size() * epochs.front().size()));
  using features::CachePolicy;
  const std::vector<CachePolicy> policies{CachePolicy::kStatic, CachePolicy::kSieve,
                                          CachePolicy::kS3Fifo, CachePolicy::kLru,
                                          CachePolicy::kClock};
  std::vector<PolicyFigures> figures;
  for (const CachePolicy policy : policies) {
    figures.push_back(replay(backing, degree_order, policy, capacity_bytes, inputs));
  }
  const double lru = figures[3].last_epoch.hit_rate();
  fmt::print("  {:<8} {:>9} {:>16} {:>14} {:>10}\n", "policy", "hit rate", "rows fetched/epoch",
             "ms per batch", "vs lru");
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const features::CacheStats& s = figures[i].last_epoch;
    fmt::print("  {:<8} {:>9.4f} {:>16} {:>14.2f} {:>9.3f}x\n", name_of(policies[i]), s.hit_rate(),
               s.misses, figures[i].seconds_per_batch * 1e3, lru > 0 ? s.hit_rate() / lru : 0.0);
  }
}

}  // namespace graphloom::benchmarks
