// Temporal one-hop sampling. Columns are sorted by edge time (graph::sorted_by_time), so the
// edges a seed may use are a prefix of its column, found by binary search; the picks are then
// those of the plain uniform kernel over that prefix, or its last `fanout` edges.
#include "temporal_kernel.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "sampling_limits.h"
#include "uniform_picks.h"

namespace graphloom::sampling {
namespace {

template <typename Index>
SampledEdges run_temporal_kernel(const graph::CscGraph& graph, const at::Tensor& seeds,
                                 int64_t fanout, const SampleOptions& options) {
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  const Index* indices = graph.indices.data_ptr<Index>();
  const int64_t* edge_ids = graph.has_edge_ids() ? graph.edge_ids.data_ptr<int64_t>() : nullptr;
  const int64_t* time = graph.edge_time.data_ptr<int64_t>();
  const bool last = options.temporal_strategy == TemporalStrategy::kLast;
  const int64_t num_seeds = seeds.numel();
  const int64_t* seed = seeds.data_ptr<int64_t>();
  const at::Tensor seed_times = options.seed_times.contiguous();
  const int64_t* seed_time = seed_times.data_ptr<int64_t>();

  SampledEdges out;
  out.indptr = at::empty({num_seeds + 1}, at::kLong);
  int64_t* counts = out.indptr.data_ptr<int64_t>();
  counts[0] = 0;
  // The usable prefix of each seed's column: its edges of time <= the seed's. Sampling is
  // bound by memory latency, as in the plain kernel: the column bounds are read first with
  // the bounds of later seeds in flight, then each binary search with later columns' times
  // in flight.
  at::Tensor column_begin = at::empty({num_seeds}, at::kLong);
  at::Tensor usable_edges = at::empty({num_seeds}, at::kLong);
  int64_t* begin_of = column_begin.data_ptr<int64_t>();
  int64_t* usable = usable_edges.data_ptr<int64_t>();
  constexpr int64_t kBoundsAhead = 16;
  constexpr int64_t kColumnsAhead = 6;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < num_seeds; ++i) {
    if (i + kBoundsAhead < num_seeds) __builtin_prefetch(indptr + seed[i + kBoundsAhead]);
    begin_of[i] = indptr[seed[i]];
    usable[i] = indptr[seed[i] + 1] - begin_of[i];  // the degree, until the search below
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < num_seeds; ++i) {
    if (i + kColumnsAhead < num_seeds) {
      const int64_t ahead = i + kColumnsAhead;
      __builtin_prefetch(time + begin_of[ahead] + usable[ahead] / 2);
      __builtin_prefetch(indices + begin_of[ahead] + usable[ahead] / 2);
    }
    const int64_t* begin = time + begin_of[i];
    usable[i] = std::upper_bound(begin, begin + usable[i], seed_time[i]) - begin;
    if (fanout < 0) {
      counts[i + 1] = usable[i];
    } else if (options.replace) {
      counts[i + 1] = usable[i] > 0 ? fanout : 0;
    } else {
      counts[i + 1] = std::min(usable[i], fanout);
    }
  }
  sum_pick_counts(counts, num_seeds, fanout, options.max_picks);
  const int64_t* offset = counts;

  out.neighbors = at::empty({offset[num_seeds]}, at::kLong);
  out.edge_ids = at::empty({offset[num_seeds]}, at::kLong);
  int64_t* neighbors = out.neighbors.data_ptr<int64_t>();
  int64_t* ids = out.edge_ids.data_ptr<int64_t>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < num_seeds; ++i) {
    const int64_t begin = begin_of[i];
    const int64_t picks = offset[i + 1] - offset[i];
    int64_t* positions = ids + offset[i];
    if (picks == usable[i] && !options.replace) {  // all of them (also `last` below its fanout)
      for (int64_t j = 0; j < picks; ++j) positions[j] = begin + j;
    } else if (last) {
      for (int64_t j = 0; j < picks; ++j) positions[j] = begin + usable[i] - picks + j;
    } else {
      RandomStream rng(
          stream_key({options.random_key, static_cast<uint64_t>(seed[i] + options.first_node)}));
      if (options.replace) {
        for (int64_t j = 0; j < picks; ++j)
          positions[j] = begin + static_cast<int64_t>(rng.uniform(usable[i]));
      } else {
        pick_uniform_without_replacement(begin, usable[i], picks, rng, positions);
      }
    }
    for (int64_t j = 0; j < picks; ++j) {
      const int64_t e = positions[j];
      neighbors[offset[i] + j] = indices[e];
      positions[j] = edge_ids != nullptr ? edge_ids[e] : e;
    }
  }
  return out;
}

}  // namespace

void check_temporal_request(const graph::CscGraph& graph, const at::Tensor& seeds,
                            const SampleOptions& options) {
  const at::Tensor& times = options.seed_times;
  if (times.scalar_type() != at::kLong || times.dim() != 1 || times.numel() != seeds.numel()) {
    throw OptionError(
        "seed_times",
        fmt::format("must be an int64 tensor of one time per seed ({}), got {} "
                    "with {} values",
                    seeds.numel(), c10::toString(times.scalar_type()), times.numel()));
  }
  if (options.direction != EdgeDirection::kIn)
    throw OptionError("direction", "temporal sampling follows in-edges only");
  GL_CHECK(graph.edge_time.defined(),
           "temporal sampling needs the graph's edge times, each column sorted by them "
           "(graph::sorted_by_time over node or edge timestamps)");
  if (options.weighted)
    throw OptionError("weighted", "temporal sampling by edge weights is not built");
  if (options.labor.enabled)
    throw OptionError("method", "temporal sampling with LABOR is not built");
  if (!options.edge_type_fanouts.empty() || graph.type_per_edge.defined())
    throw OptionError("edge_type_fanouts", "temporal sampling of typed graphs is not built");
  if (options.temporal_strategy == TemporalStrategy::kLast && options.replace) {
    throw OptionError(
        "temporal_strategy",
        "'last' takes each seed's most recent edges and has no with-replacement form");
  }
}

SampledEdges sample_temporal_csc(const graph::CscGraph& graph, const at::Tensor& seeds,
                                 int64_t fanout, const SampleOptions& options) {
  return dispatch_index_type(graph.indices.scalar_type(), "graph indices", [&](auto index_tag) {
    return run_temporal_kernel<decltype(index_tag)>(graph, seeds, fanout, options);
  });
}

}  // namespace graphloom::sampling
