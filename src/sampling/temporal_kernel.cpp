// Temporal one-hop sampling. Columns are sorted by edge time (graph::sorted_by_time; typed
// graphs by edge type, then time), so the edges a seed may use are a prefix of its column (of
// each type segment), found by binary search; the picks are then those of the plain uniform
// kernel over that prefix, or its last `fanout` edges.
#include "temporal_kernel.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "sampling_limits.h"
#include "uniform_picks.h"

namespace graphloom::sampling {
namespace {

// The picks among a segment's `usable` edges (its prefix of time <= the seed's).
int64_t temporal_pick_count(int64_t usable, int64_t fanout, bool replace) {
  if (fanout < 0) return usable;
  if (replace) return usable > 0 ? fanout : 0;
  return std::min(usable, fanout);
}

// Writes the CSC positions of `picks` picks (for `fanout`) among the `usable` edges from
// `begin`: all of them, the latest (`last`), or drawn uniformly from the seed's stream, made
// on first use.
template <typename MakeStream>
void fill_temporal_picks(int64_t begin, int64_t usable, int64_t fanout, int64_t picks, bool replace,
                         bool last, std::optional<RandomStream>& rng, MakeStream&& make_stream,
                         int64_t* positions) {
  // All of them: fanout -1 (as in the plain kernel, with replacement too), or as many picks as
  // edges without replacement (also `last` below its fanout).
  if (fanout < 0 || (picks == usable && !replace)) {
    for (int64_t j = 0; j < picks; ++j) positions[j] = begin + j;
  } else if (last) {
    for (int64_t j = 0; j < picks; ++j) positions[j] = begin + usable - picks + j;
  } else {
    if (!rng) rng.emplace(make_stream());
    if (replace) {
      for (int64_t j = 0; j < picks; ++j)
        positions[j] = begin + static_cast<int64_t>(rng->uniform(usable));
    } else {
      pick_uniform_without_replacement(begin, usable, picks, *rng, positions);
    }
  }
}

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
    counts[i + 1] = temporal_pick_count(usable[i], fanout, options.replace);
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
    std::optional<RandomStream> rng;
    fill_temporal_picks(
        begin, usable[i], fanout, picks, options.replace, last, rng,
        [&] {
          return RandomStream(stream_key(
              {options.random_key, static_cast<uint64_t>(seed[i] + options.first_node)}));
        },
        positions);
    for (int64_t j = 0; j < picks; ++j) {
      const int64_t e = positions[j];
      neighbors[offset[i] + j] = indices[e];
      positions[j] = edge_ids != nullptr ? edge_ids[e] : e;
    }
  }
  return out;
}

// Typed graphs: each column is a run of edge-type segments (graph::sorted_by_time sorts by
// type, then time), and each segment's usable prefix gets its type's fanout, as in the plain
// typed kernel; a seed's one stream serves its segments in type order.
template <typename Index, typename Type>
SampledEdges run_typed_temporal_kernel(const graph::CscGraph& graph, const at::Tensor& seeds,
                                       int64_t fanout, const SampleOptions& options) {
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  const Index* indices = graph.indices.data_ptr<Index>();
  const int64_t* edge_ids = graph.has_edge_ids() ? graph.edge_ids.data_ptr<int64_t>() : nullptr;
  const int64_t* time = graph.edge_time.data_ptr<int64_t>();
  const Type* type = graph.type_per_edge.data_ptr<Type>();
  const bool last = options.temporal_strategy == TemporalStrategy::kLast;
  const std::vector<int64_t>& type_fanouts = options.edge_type_fanouts;
  const auto fanout_of = [&](int64_t r) {
    if (type_fanouts.empty()) return fanout;
    return r < static_cast<int64_t>(type_fanouts.size()) ? type_fanouts[r] : int64_t{0};
  };
  const int64_t num_seeds = seeds.numel();
  const int64_t* seed = seeds.data_ptr<int64_t>();
  const at::Tensor seed_times = options.seed_times.contiguous();
  const int64_t* seed_time = seed_times.data_ptr<int64_t>();
  // Calls visit(begin, usable edges, type) for each type segment of seed i's column.
  const auto for_each_segment = [&](int64_t i, auto&& visit) {
    const Type* end = type + indptr[seed[i] + 1];
    for (const Type* first = type + indptr[seed[i]]; first != end;) {
      const Type* past = std::upper_bound(first, end, *first);
      const int64_t begin = first - type;
      const int64_t usable =
          std::upper_bound(time + begin, time + (past - type), seed_time[i]) - (time + begin);
      visit(begin, usable, static_cast<int64_t>(*first));
      first = past;
    }
  };
  SampledEdges out;
  out.indptr = at::empty({num_seeds + 1}, at::kLong);
  int64_t* counts = out.indptr.data_ptr<int64_t>();
  counts[0] = 0;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < num_seeds; ++i) {
    int64_t picks = 0;
    for_each_segment(i, [&](int64_t, int64_t usable, int64_t r) {
      picks += temporal_pick_count(usable, fanout_of(r), options.replace);
    });
    counts[i + 1] = picks;
  }
  sum_pick_counts(counts, num_seeds, fanout, options.max_picks);
  const int64_t* offset = counts;
  out = typed_pick_arrays(std::move(out.indptr));
  int64_t* neighbors = out.neighbors.data_ptr<int64_t>();
  int64_t* ids = out.edge_ids.data_ptr<int64_t>();
  int64_t* types = out.edge_types.data_ptr<int64_t>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < num_seeds; ++i) {
    std::optional<RandomStream> rng;
    const auto make_stream = [&] {
      return RandomStream(
          stream_key({options.random_key, static_cast<uint64_t>(seed[i] + options.first_node)}));
    };
    int64_t at = offset[i];
    for_each_segment(i, [&](int64_t begin, int64_t usable, int64_t r) {
      const int64_t segment_fanout = fanout_of(r);
      const int64_t picks = temporal_pick_count(usable, segment_fanout, options.replace);
      fill_temporal_picks(begin, usable, segment_fanout, picks, options.replace, last, rng,
                          make_stream, ids + at);
      std::fill(types + at, types + at + picks, r);
      at += picks;
    });
    for (int64_t j = offset[i]; j < offset[i + 1]; ++j) {
      const int64_t e = ids[j];
      neighbors[j] = indices[e];
      ids[j] = edge_ids != nullptr ? edge_ids[e] : e;
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
  if (!options.edge_type_fanouts.empty() && !graph.type_per_edge.defined())
    throw OptionError("edge_type_fanouts", "need a graph with edge types (type_per_edge)");
  if (options.temporal_strategy == TemporalStrategy::kLast && options.replace) {
    throw OptionError(
        "temporal_strategy",
        "'last' takes each seed's most recent edges and has no with-replacement form");
  }
}

SampledEdges sample_temporal_csc(const graph::CscGraph& graph, const at::Tensor& seeds,
                                 int64_t fanout, const SampleOptions& options) {
  return dispatch_index_type(graph.indices.scalar_type(), "graph indices", [&](auto index_tag) {
    using Index = decltype(index_tag);
    if (!graph.type_per_edge.defined()) {
      return run_temporal_kernel<Index>(graph, seeds, fanout, options);
    }
    return dispatch_integer_type(
        graph.type_per_edge.scalar_type(), "type_per_edge", [&](auto type) {
          return run_typed_temporal_kernel<Index, decltype(type)>(graph, seeds, fanout, options);
        });
  });
}

}  // namespace graphloom::sampling
