// One-hop neighbor sampling on a CSC: a thin checked front (sample_csc_neighbors) and the
// passes over a batch's seeds (column bounds, counts, picks) around one templated per-column
// kernel (column_kernel.h) whose variants (replacement, weights) are compile-time flags; LABOR
// is a run-time branch per seed (its cost is a variate per neighbor, not the branch).
//
// Each seed draws from its own counter-based stream keyed by (random_key, node id), so the
// result is the same whatever the thread count. Scratch space is thread-local and reused:
// no heap allocation per seed.
#include "graphloom/sampling/local_neighbor_source.h"

#include <ATen/ATen.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "column_kernel.h"
#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/graph/transforms.h"
#include "graphloom/graph/weight_alias.h"
#include "sampling_limits.h"
#include "temporal_kernel.h"

namespace graphloom::sampling {
namespace {

// Sampling is bound by memory latency (one random column per seed). Both kernels first read
// each seed's column bounds once, prefetching far ahead; later passes then know every column's
// address and prefetch the columns themselves kColumnsAhead seeds ahead, so several misses are
// always in flight. The array is thread-local to the calling thread (the parallel regions of
// the kernel use it through the returned pointer) and reused across calls.
constexpr int64_t kBoundsAhead = 16;
constexpr int64_t kColumnsAhead = 6;
constexpr int64_t kPicksAhead = 4;
constexpr int64_t kChoicesAhead = 4;

// A call's column bounds, in a thread-local array that keeps at most kKeptBoundsBytes between
// calls: one huge request must not leave its scratch behind on a server thread.
constexpr std::size_t kKeptBoundsBytes = 4 << 20;

template <typename Column>
class ColumnBounds {
 public:
  explicit ColumnBounds(int64_t num_seeds) {
    columns().resize(static_cast<std::size_t>(num_seeds));
  }
  ~ColumnBounds() {
    if (columns().capacity() * sizeof(Column) > kKeptBoundsBytes)
      std::vector<Column>().swap(columns());
  }
  ColumnBounds(const ColumnBounds&) = delete;
  ColumnBounds& operator=(const ColumnBounds&) = delete;
  Column* data() { return columns().data(); }

 private:
  static std::vector<Column>& columns() {
    thread_local std::vector<Column> kept;
    return kept;
  }
};

template <typename KernelType>
void read_column_bounds(const KernelType& kernel, const int64_t* seed, int64_t num_seeds,
                        typename KernelType::Column* column) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < num_seeds; ++i) {
    if (i + kBoundsAhead < num_seeds) kernel.prefetch_bounds(seed[i + kBoundsAhead]);
    column[i] = kernel.column(seed[i]);
  }
}

template <typename Index, typename Weight, bool kReplace, bool kWeighted>
SampledEdges run_kernel(const graph::CscGraph& graph, const at::Tensor& seeds, int64_t fanout,
                        const SampleOptions& options) {
  const uint64_t random_key = options.random_key;
  const int64_t first_node = options.first_node;
  const ColumnKernel<Index, Weight, kReplace, kWeighted> kernel(graph, options.labor);
  const int64_t num_seeds = seeds.numel();
  const int64_t* seed = seeds.data_ptr<int64_t>();
  SampledEdges out;
  out.indptr = at::empty({num_seeds + 1}, at::kLong);
  int64_t* indptr = out.indptr.data_ptr<int64_t>();
  indptr[0] = 0;
  ColumnBounds<typename ColumnKernel<Index, Weight, kReplace, kWeighted>::Column> bounds(num_seeds);
  auto* column = bounds.data();
  read_column_bounds(kernel, seed, num_seeds, column);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < num_seeds; ++i) {
    if (i + kColumnsAhead < num_seeds) kernel.prefetch_count_inputs(column[i + kColumnsAhead]);
    indptr[i + 1] = kernel.count(column[i], fanout);
  }
  sum_pick_counts(indptr, num_seeds, fanout, options.max_picks);

  out.neighbors = at::empty({indptr[num_seeds]}, at::kLong);
  out.edge_ids = at::empty({indptr[num_seeds]}, at::kLong);
  int64_t* neighbors = out.neighbors.data_ptr<int64_t>();
  int64_t* ids = out.edge_ids.data_ptr<int64_t>();
  // Seed i's stream: its picks draw from it, and so does the copy that prefetches them in a
  // long column (prefetch_choices).
  const auto stream_of = [&](int64_t i) {
    return RandomStream(stream_key({random_key, static_cast<uint64_t>(seed[i] + first_node)}));
  };
  // Each thread chooses the picks of seed i, then reads the picks of seed i - kPicksAhead,
  // whose lines have had time to arrive (a hub's picks are each a cache miss).
#pragma omp parallel
  {
    const int threads = omp_get_num_threads();
    const int64_t chunk = (num_seeds + threads - 1) / threads;
    const int64_t lo = std::min(num_seeds, chunk * omp_get_thread_num());
    const int64_t hi = std::min(num_seeds, lo + chunk);
    for (int64_t i = lo; i < hi + kPicksAhead; ++i) {
      if (i < hi) {
        if (i + kColumnsAhead < hi) kernel.prefetch_column(column[i + kColumnsAhead]);
        if (kWeighted && i + kChoicesAhead < hi) {
          const int64_t a = i + kChoicesAhead;
          kernel.prefetch_choices(column[a], fanout, indptr[a + 1] - indptr[a], stream_of(a));
        }
        RandomStream rng = stream_of(i);
        const int64_t picks = indptr[i + 1] - indptr[i];
        kernel.choose(column[i], fanout, picks, rng, ids + indptr[i]);
        kernel.prefetch_picks(column[i], picks, ids + indptr[i]);
      }
      const int64_t j = i - kPicksAhead;
      if (j >= lo)
        kernel.translate(indptr[j + 1] - indptr[j], neighbors + indptr[j], ids + indptr[j]);
    }
  }
  return out;
}

// Typed graphs: each column is a run of segments, one per edge type present (sorted by type),
// and segment r gets its own fanout. A seed's stream serves its segments in type order, so the
// picks are as reproducible as in the homogeneous kernel.
template <typename Index, typename Weight, bool kReplace, bool kWeighted, typename Type>
SampledEdges run_typed_kernel(const graph::CscGraph& graph, const at::Tensor& seeds, int64_t fanout,
                              const SampleOptions& options) {
  using KernelType = ColumnKernel<Index, Weight, kReplace, kWeighted>;
  using Column = typename KernelType::Column;
  const KernelType kernel(graph, options.labor);
  const Type* type = graph.type_per_edge.data_ptr<Type>();
  const std::vector<int64_t>& type_fanouts = options.edge_type_fanouts;
  const auto fanout_of = [&](int64_t r) {
    if (type_fanouts.empty()) return fanout;
    return r < static_cast<int64_t>(type_fanouts.size()) ? type_fanouts[r] : int64_t{0};
  };
  // Calls visit(segment, edge type) for each edge-type segment of column c.
  const auto for_each_segment = [&](const Column& c, auto&& visit) {
    const Type* end = type + c.begin + c.degree;
    for (const Type* first = type + c.begin; first != end;) {
      const Type* last = std::upper_bound(first, end, *first);
      visit(Column{first - type, last - first}, static_cast<int64_t>(*first));
      first = last;
    }
  };
  const int64_t num_seeds = seeds.numel();
  const int64_t* seed = seeds.data_ptr<int64_t>();
  SampledEdges out;
  out.indptr = at::empty({num_seeds + 1}, at::kLong);
  int64_t* indptr = out.indptr.data_ptr<int64_t>();
  indptr[0] = 0;
  // As in run_kernel: column bounds first, then the counting pass prefetches the type
  // segments and the filling pass the sources ahead.
  ColumnBounds<Column> bounds(num_seeds);
  Column* column = bounds.data();
  read_column_bounds(kernel, seed, num_seeds, column);
  const auto prefetch_types = [&](const Column& c) {
    __builtin_prefetch(type + c.begin);
    if (c.degree * static_cast<int64_t>(sizeof(Type)) > 64)
      __builtin_prefetch(type + c.begin + c.degree - 1);
  };
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < num_seeds; ++i) {
    if (i + kColumnsAhead < num_seeds) {
      prefetch_types(column[i + kColumnsAhead]);
      kernel.prefetch_count_inputs(column[i + kColumnsAhead]);
    }
    int64_t picks = 0;
    for_each_segment(column[i], [&](const Column& segment, int64_t r) {
      picks += kernel.count(segment, fanout_of(r));
    });
    indptr[i + 1] = picks;
  }
  sum_pick_counts(indptr, num_seeds, fanout, options.max_picks);
  out = typed_pick_arrays(std::move(out.indptr));
  int64_t* neighbors = out.neighbors.data_ptr<int64_t>();
  int64_t* ids = out.edge_ids.data_ptr<int64_t>();
  int64_t* types = out.edge_types.data_ptr<int64_t>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < num_seeds; ++i) {
    if (i + kColumnsAhead < num_seeds) {
      kernel.prefetch_column(column[i + kColumnsAhead]);
      prefetch_types(column[i + kColumnsAhead]);
    }
    RandomStream rng(
        stream_key({options.random_key, static_cast<uint64_t>(seed[i] + options.first_node)}));
    int64_t offset = indptr[i];
    for_each_segment(column[i], [&](const Column& segment, int64_t r) {
      const int64_t segment_fanout = fanout_of(r);
      const int64_t picks = kernel.count(segment, segment_fanout);
      kernel.fill(segment, segment_fanout, picks, rng, neighbors + offset, ids + offset);
      std::fill(types + offset, types + offset + picks, r);
      offset += picks;
    });
  }
  return out;
}

// Runs the homogeneous kernel, or the typed one (dispatched on type_per_edge's dtype).
template <typename Index, typename Weight, bool kReplace, bool kWeighted>
SampledEdges run_any_kernel(const graph::CscGraph& graph, const at::Tensor& seeds, int64_t fanout,
                            const SampleOptions& options) {
  if (!graph.type_per_edge.defined()) {
    return run_kernel<Index, Weight, kReplace, kWeighted>(graph, seeds, fanout, options);
  }
  return dispatch_integer_type(graph.type_per_edge.scalar_type(), "type_per_edge", [&](auto type) {
    return run_typed_kernel<Index, Weight, kReplace, kWeighted, decltype(type)>(graph, seeds,
                                                                                fanout, options);
  });
}

}  // namespace

SampledEdges sample_csc_neighbors(const graph::CscGraph& graph, const at::Tensor& seeds,
                                  int64_t fanout, const SampleOptions& options) {
  check_fanout(fanout, options.replace, "fanout");
  for (const int64_t type_fanout : options.edge_type_fanouts) {
    check_fanout(type_fanout, options.replace, "edge_type_fanouts");
  }
  if (options.max_picks < 0)
    throw OptionError("max_picks", fmt::format("must be >= 0, got {}", options.max_picks));
  check_labor_request(options);
  GL_CHECK(options.edge_type_fanouts.empty() || graph.type_per_edge.defined(),
           "per-edge-type fanouts need a graph with edge types (type_per_edge)");
  if (graph.type_per_edge.defined()) {
    const auto type_dtype = graph.type_per_edge.scalar_type();
    GL_CHECK(type_dtype == at::kChar || type_dtype == at::kShort || type_dtype == at::kInt ||
                 type_dtype == at::kLong,
             "type_per_edge must be int8, int16, int32 or int64, got {}",
             c10::toString(type_dtype));
  }
  GL_CHECK(seeds.scalar_type() == at::kLong && seeds.dim() == 1,
           "seeds must be a 1-D int64 tensor, got {} with {} dims",
           c10::toString(seeds.scalar_type()), seeds.dim());
  const int64_t first = options.first_node;
  const at::Tensor contiguous_seeds = first == 0 ? seeds.contiguous() : seeds - first;
  if (contiguous_seeds.numel() > 0) {
    const int64_t low = contiguous_seeds.min().item<int64_t>();
    const int64_t high = contiguous_seeds.max().item<int64_t>();
    GL_CHECK_AS(RangeError, low >= 0 && high < graph.num_nodes,
                "seed node id {} is outside [{}, {})", (low < 0 ? low : high) + first, first,
                first + graph.num_nodes);
  }
  if (options.seed_times.defined()) {
    check_temporal_request(graph, contiguous_seeds, options);
    SampledEdges out = sample_temporal_csc(graph, contiguous_seeds, fanout, options);
    if (!options.edge_ids) out.edge_ids = at::Tensor();
    return out;
  }
  if (options.weighted) {
    GL_CHECK(graph.has_weights(), "weighted sampling needs edge weights, but the graph has none");
    GL_CHECK(graph.weights.numel() == graph.num_edges(),
             "edge weights: expected {} values (one per edge), got {}", graph.num_edges(),
             graph.weights.numel());
    GL_CHECK(graph.weight_alias.defined(),
             "weighted sampling needs the graph's alias tables (graph::with_weight_alias)");
  }
  SampledEdges out =
      dispatch_index_type(graph.indices.scalar_type(), "graph indices", [&](auto index_tag) {
        using Index = decltype(index_tag);
        const auto weight_dtype = options.weighted ? graph.weights.scalar_type() : at::kFloat;
        return dispatch_float_type(weight_dtype, "edge weights", [&](auto weight_tag) {
          using Weight = decltype(weight_tag);
          const at::Tensor& s = contiguous_seeds;
          if (options.weighted) {
            return options.replace
                       ? run_any_kernel<Index, Weight, true, true>(graph, s, fanout, options)
                       : run_any_kernel<Index, Weight, false, true>(graph, s, fanout, options);
          }
          return options.replace
                     ? run_any_kernel<Index, Weight, true, false>(graph, s, fanout, options)
                     : run_any_kernel<Index, Weight, false, false>(graph, s, fanout, options);
        });
      });
  // The kernels need the array anyway: it holds the picked positions before they are translated.
  if (!options.edge_ids) out.edge_ids = at::Tensor();
  return out;
}

LocalNeighborSource::LocalNeighborSource(graph::CscGraph graph) : graph_(std::move(graph)) {}

const graph::CscGraph& LocalNeighborSource::out_graph() const {
  std::call_once(out_graph_once_, [this] { out_graph_ = graph::reverse(graph_); });
  return out_graph_;
}

const graph::CscGraph& LocalNeighborSource::graph_for(const SampleOptions& options) const {
  const bool in = options.direction == EdgeDirection::kIn;
  const graph::CscGraph& graph = in ? graph_ : out_graph();
  if (!options.weighted || !graph.has_weights() || graph.weight_alias.defined()) return graph;
  const int direction = in ? 0 : 1;
  std::call_once(weighted_once_[direction],
                 [&] { weighted_[direction] = graph::with_weight_alias(graph); });
  return weighted_[direction];
}

SampledEdges LocalNeighborSource::sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                                   const SampleOptions& options) const {
  return sample_csc_neighbors(graph_for(options), seeds, fanout, options);
}

}  // namespace graphloom::sampling
