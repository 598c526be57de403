// Temporal against plain uniform sampling (temporal_bench.h). The plain reference samples the
// dataset's graph as loaded; the temporal samplers read the graph sorted by time (sorting
// timed here), so the ratio is what a user pays for the time constraint.
#include "temporal_bench.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "graphloom/base/timer.h"
#include "graphloom/graph/temporal.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "sampling_measure.h"

namespace graphloom::benchmarks {
namespace {

constexpr int64_t kTimeRange = int64_t{1} << 20;

double per_batch(int64_t count, int64_t batches) {
  return static_cast<double>(count) / static_cast<double>(batches);
}

}  // namespace

void bench_temporal(const io::Dataset& dataset, const std::vector<at::Tensor>& seeds, int64_t total,
                    const SamplingBenchOptions& o, int threads) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  const bool own_times = dataset.node_timestamp.defined() || dataset.graph.edge_time.defined();
  const at::Tensor edge_time =
      own_times ? dataset.graph.edge_time
                : at::randint(kTimeRange, {dataset.graph.num_edges()}, generator, at::kLong);
  std::vector<at::Tensor> seed_times;
  for (int64_t i = 0; i < total; ++i) {
    const at::Tensor& batch = seeds[static_cast<std::size_t>(i)];
    seed_times.push_back(dataset.node_timestamp.defined()
                             ? dataset.node_timestamp.index_select(0, batch)
                             : at::randint(kTimeRange, {batch.numel()}, generator, at::kLong));
  }
  Timer timer;
  const sampling::LocalNeighborSource timed(
      graph::sorted_by_time(dataset.graph, dataset.node_timestamp, edge_time));
  const double sort_seconds = timer.seconds();
  const sampling::LocalNeighborSource plain(dataset.graph);
  constexpr int kRounds = 5;
  fmt::print(
      "temporal: {}; columns sorted by time in {:.3f} s; {} rounds alternating with uniform "
      "sampling without times, medians\n",
      own_times ? "the dataset's timestamps"
                : "uniform random edge and seed times (about half of each column usable)",
      sort_seconds, kRounds);
  fmt::print("  {:<20} {:>12} {:>12} {:>8} {:>14} {:>14}\n", "seeds/s", "temporal", "uniform",
             "ratio", "edges/batch", "inputs/batch");
  const sampling::NeighborSampler uniform(&plain, {.fanouts = o.fanouts, .seed = o.seed});
  for (const auto strategy :
       {sampling::TemporalStrategy::kUniform, sampling::TemporalStrategy::kLast}) {
    const sampling::NeighborSampler temporal(
        &timed, {.fanouts = o.fanouts, .seed = o.seed, .temporal_strategy = strategy});
    std::vector<SamplingFigures> temporal_runs, uniform_runs;
    for (int round = 0; round < kRounds; ++round) {
      temporal_runs.push_back(measure_sampling(temporal, seeds, total, threads, seed_times));
      uniform_runs.push_back(measure_sampling(uniform, seeds, total, threads));
    }
    const double t = median_seeds_per_second(temporal_runs);
    const double u = median_seeds_per_second(uniform_runs);
    const SamplingFigures& last_run = temporal_runs.back();
    const SamplingFigures& reference = uniform_runs.back();
    fmt::print("  {:<20} {:>12.0f} {:>12.0f} {:>7.3f}x {:>6.0f} / {:<6.0f} {:>6.0f} / {:<6.0f}\n",
               fmt::format("strategy {}", name_of(strategy)), t, u, t / u,
               per_batch(last_run.edges, total), per_batch(reference.edges, total),
               per_batch(last_run.inputs, total), per_batch(reference.inputs, total));
  }
  fmt::print(
      "  (edges and inputs per batch: temporal / uniform; a seed reaches only the edges "
      "of its past)\n");
}

}  // namespace graphloom::benchmarks
