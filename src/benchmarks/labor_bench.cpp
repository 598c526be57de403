// LABOR against the neighbor sampler (labor_bench.h). The closed form checks the sampler, not
// only its speed: for the seeds S of a batch, LABOR keeps edge t -> s with probability p_st
// (LABOR-0: min(1, k / d_s); LABOR-*: labor_inclusion_probabilities) by one shared variate u_t,
// and the neighbor sampler keeps k of d_s uniformly, so the first hop's distinct nodes are
//   LABOR:    sum over t of max_{s in S, t in N(s)} p_st
//   neighbor: sum over t of 1 - prod_{s} C(d_s - m_st, k) / C(d_s, k)   (independent seeds)
// where m_st counts the edges t -> s (multi-edges).
#include "labor_bench.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/sampling/labor_importance.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "sampling_measure.h"

namespace graphloom::benchmarks {
namespace {

struct HopOne {
  double labor = 0, neighbor = 0;  // expected distinct first-hop nodes
};

// P(a seed of degree d that keeps k neighbors uniformly misses all m copies of one neighbor).
double miss_probability(int64_t d, int64_t m, int64_t k) {
  if (d <= k) return 0.0;
  double q = 1.0;
  for (int64_t i = 0; i < k && q > 0; ++i) {
    q *= std::max<double>(0.0, static_cast<double>(d - m - i)) / static_cast<double>(d - i);
  }
  return q;
}

// LABOR's side: the candidates' probabilities, the highest per distinct node.
double labor_hop_one(const sampling::NeighborSource& source, const at::Tensor& seeds, int64_t k,
                     int64_t rounds) {
  const sampling::SampledEdges all = source.sample_neighbors(seeds, -1, {.edge_ids = false});
  const at::Tensor p = sampling::labor_inclusion_probabilities(
      {all.indptr, all.neighbors, at::full({seeds.numel()}, k, at::kLong)}, rounds);
  const auto unique = at::_unique2(all.neighbors, /*sorted=*/false, /*return_inverse=*/true);
  return at::zeros({std::get<0>(unique).numel()}, p.options())
      .scatter_reduce_(0, std::get<1>(unique), p, "amax", /*include_self=*/false)
      .sum()
      .item<double>();
}

double neighbor_hop_one(const graph::CscGraph& graph, const at::Tensor& seeds, int64_t k) {
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  std::unordered_map<int64_t, double> neighbor_miss;
  std::vector<int64_t> column;
  for (const int64_t s :
       std::vector<int64_t>(seeds.data_ptr<int64_t>(), seeds.data_ptr<int64_t>() + seeds.numel())) {
    const int64_t d = indptr[s + 1] - indptr[s];
    const at::Tensor neighbors = graph.indices.slice(0, indptr[s], indptr[s + 1]).to(at::kLong);
    column.assign(neighbors.data_ptr<int64_t>(), neighbors.data_ptr<int64_t>() + d);
    std::sort(column.begin(), column.end());
    for (std::size_t i = 0; i < column.size();) {
      std::size_t j = i;
      while (j < column.size() && column[j] == column[i]) ++j;
      const auto [it, fresh] = neighbor_miss.try_emplace(column[i], 1.0);
      it->second *= k < 0 ? 0.0 : miss_probability(d, static_cast<int64_t>(j - i), k);
      i = j;
    }
  }
  double expected = 0;
  for (const auto& [node, miss] : neighbor_miss) expected += 1.0 - miss;
  return expected;
}

// Distinct nodes the seeds' own layer (the last block) sampled.
double measured_hop_one(const sampling::MiniBatch& batch) {
  const sampling::Block& last = batch.blocks.back();
  const at::Tensor neighbors = last.src_ids.index_select(0, last.indices);
  return static_cast<double>(std::get<0>(at::_unique(neighbors)).numel());
}

// Feature bytes an epoch of `batches` (in order) reads from the backing table through one
// SIEVE cache of `fraction` of the rows.
double fetched_bytes(const sampling::NeighborSampler& sampler, const std::vector<at::Tensor>& seeds,
                     int64_t batches, const at::Tensor& table, double fraction) {
  const features::TensorFeatureSource backing({{"feat", table}});
  const int64_t row_bytes = table.nbytes() / std::max<int64_t>(1, table.size(0));
  const features::CachedFeatureSource cache(
      backing, "feat",
      {.policy = features::CachePolicy::kSieve,
       .capacity_bytes =
           static_cast<int64_t>(fraction * static_cast<double>(table.size(0))) * row_bytes,
       .shards = 1});
  for (int64_t i = 0; i < batches; ++i) {
    cache.gather("feat", sampler.sample(seeds[i], 0, static_cast<uint64_t>(i)).input_nodes());
  }
  return static_cast<double>(cache.stats().misses) * static_cast<double>(row_bytes);
}

void print_row(const char* what, double labor, double neighbor) {
  fmt::print("  {:<34} {:>12.0f} {:>12.0f} {:>7.3f}x\n", what, labor, neighbor, labor / neighbor);
}

}  // namespace

void bench_labor(const io::Dataset& dataset, const sampling::NeighborSource& source,
                 const std::vector<at::Tensor>& seeds, int64_t total, const SamplingBenchOptions& o,
                 int threads) {
  const sampling::NeighborSampler labor(&source, {.fanouts = o.fanouts,
                                                  .seed = o.seed,
                                                  .method = sampling::SamplingMethod::kLabor,
                                                  .labor = o.labor});
  const sampling::NeighborSampler neighbor(&source, {.fanouts = o.fanouts, .seed = o.seed});
  constexpr int kRounds = 3;
  std::vector<SamplingFigures> labor_runs, neighbor_runs;
  for (int round = 0; round < kRounds; ++round) {
    labor_runs.push_back(measure_sampling(labor, seeds, total, threads));
    neighbor_runs.push_back(measure_sampling(neighbor, seeds, total, threads));
  }
  const auto per_batch = [&](const SamplingFigures& f, int64_t SamplingFigures::*field) {
    return static_cast<double>(f.*field) / static_cast<double>(total);
  };
  fmt::print(
      "labor: layer_dependency={}, batch_dependency={}, importance_sampling={} ({} rounds "
      "alternating with the neighbor sampler, medians)\n",
      o.labor.layer_dependency, o.labor.batch_dependency, o.labor.importance_sampling, kRounds);
  fmt::print("  {:<34} {:>12} {:>12} {:>8}\n", "", "labor", "neighbor", "ratio");
  const SamplingFigures& l = labor_runs.front();
  const SamplingFigures& n = neighbor_runs.front();
  print_row("input nodes per batch", per_batch(l, &SamplingFigures::inputs),
            per_batch(n, &SamplingFigures::inputs));
  print_row("sampled edges per batch", per_batch(l, &SamplingFigures::edges),
            per_batch(n, &SamplingFigures::edges));
  print_row("seeds/s", median_seeds_per_second(labor_runs), median_seeds_per_second(neighbor_runs));

  // The first hop of up to 16 batches, measured and in closed form.
  const int64_t checked = std::min<int64_t>(total, 16);
  HopOne expected, measured;
  for (int64_t i = 0; i < checked; ++i) {
    expected.labor +=
        labor_hop_one(source, seeds[i], o.fanouts.back(), o.labor.importance_sampling);
    expected.neighbor += neighbor_hop_one(dataset.graph, seeds[i], o.fanouts.back());
    measured.labor += measured_hop_one(labor.sample(seeds[i], 0, static_cast<uint64_t>(i)));
    measured.neighbor += measured_hop_one(neighbor.sample(seeds[i], 0, static_cast<uint64_t>(i)));
  }
  const double batches_checked = static_cast<double>(checked);
  print_row("first hop: nodes per batch", measured.labor / batches_checked,
            measured.neighbor / batches_checked);
  print_row("first hop: closed form", expected.labor / batches_checked,
            expected.neighbor / batches_checked);
  fmt::print(
      "  first hop: ratio measured {:.3f}x, closed form {:.3f}x ({:+.1f}%)\n",
      measured.labor / measured.neighbor, expected.labor / expected.neighbor,
      100.0 * ((measured.labor / measured.neighbor) / (expected.labor / expected.neighbor) - 1.0));

  const auto feat = dataset.node_features.find("feat");
  if (feat == dataset.node_features.end()) return;
  constexpr double kCacheFraction = 0.10;
  const double labor_bytes = fetched_bytes(labor, seeds, total, feat->second, kCacheFraction);
  const double neighbor_bytes = fetched_bytes(neighbor, seeds, total, feat->second, kCacheFraction);
  fmt::print("  {:<34} {:>10.1f}MB {:>10.1f}MB {:>7.3f}x\n",
             fmt::format("fetched, SIEVE cache of 10% ({} b.)", total), labor_bytes / 1e6,
             neighbor_bytes / 1e6, labor_bytes / neighbor_bytes);
}

}  // namespace graphloom::benchmarks
