// Weighted against uniform sampling (weighted_bench.h). Both samplers read one source, so the
// only difference is the pick: uniform draws a position, weighted reads the column's alias
// table too (built before the source is made, timed here).
#include "weighted_bench.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "graphloom/base/timer.h"
#include "graphloom/graph/weight_alias.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "sampling_measure.h"

namespace graphloom::benchmarks {

void bench_weighted(const io::Dataset& dataset, const std::vector<at::Tensor>& seeds, int64_t total,
                    const SamplingBenchOptions& o, int threads) {
  graph::CscGraph graph = dataset.graph;
  const bool random_weights = !graph.has_weights();
  if (random_weights) {
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(o.seed);
    graph.weights = 1.0 - at::rand({graph.num_edges()}, generator, at::kFloat);
  }
  Timer timer;
  const sampling::LocalNeighborSource source(graph::with_weight_alias(graph));
  const double build_seconds = timer.seconds();
  constexpr int kRounds = 5;
  fmt::print(
      "weighted: {} edge weights; alias tables built in {:.3f} s; {} rounds alternating "
      "with uniform sampling, medians\n",
      random_weights ? "uniform random (0, 1]" : "the dataset's", build_seconds, kRounds);
  fmt::print("  {:<22} {:>14} {:>14} {:>8}\n", "seeds/s", "weighted", "uniform", "ratio");
  for (const bool replace : {false, true}) {
    const sampling::NeighborSampler weighted(
        &source, {.fanouts = o.fanouts, .replace = replace, .weighted = true, .seed = o.seed});
    const sampling::NeighborSampler uniform(
        &source, {.fanouts = o.fanouts, .replace = replace, .seed = o.seed});
    std::vector<SamplingFigures> weighted_runs, uniform_runs;
    for (int round = 0; round < kRounds; ++round) {
      weighted_runs.push_back(measure_sampling(weighted, seeds, total, threads));
      uniform_runs.push_back(measure_sampling(uniform, seeds, total, threads));
    }
    const double w = median_seeds_per_second(weighted_runs);
    const double u = median_seeds_per_second(uniform_runs);
    fmt::print("  {:<22} {:>14.0f} {:>14.0f} {:>7.3f}x  (time weighted/uniform {:.2f}x)\n",
               replace ? "with replacement" : "without replacement", w, u, w / u, u / w);
  }
}

}  // namespace graphloom::benchmarks
