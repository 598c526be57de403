// The tensor-op sampler (tensor_neighbor_source.h). It mirrors the C++ kernel of
// local_neighbor_source.cpp step for step: every pick first takes the next position of its
// column, which is right for seeds that take all their neighbors; the seeds that must draw
// ("lanes") then run their streams in lock step, one draw per step for all of them at once, and
// overwrite their picks.
#include "graphloom/sampling/tensor_neighbor_source.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/base/host_memory.h"
#include "graphloom/graph/transforms.h"
#include "graphloom/graph/weight_alias.h"
#include "graphloom/sampling/labor.h"
#include "sampling_limits.h"
#include "temporal_kernel.h"
#include "tensor_random_streams.h"
#include "tensor_weighted_picks.h"
#include "weighted_picks.h"

namespace graphloom::sampling {
namespace {

// Positions in [0, degree) of `picks` draws with replacement per lane: [lanes, picks].
at::Tensor picks_with_replacement(TensorRandomStreams& rng, const at::Tensor& degree,
                                  int64_t picks) {
  const at::Tensor all = at::ones_like(degree, at::kBool);
  at::Tensor out = at::empty({degree.size(0), picks}, degree.options());
  for (int64_t n = 0; n < picks; ++n) out.select(1, n).copy_(rng.uniform(degree, all));
  return out;
}

// Floyd's algorithm, as the C++ kernel runs it: step n draws t in [0, j] for j = degree -
// picks + n and keeps t unless an earlier step took it, then j.
at::Tensor floyd_picks(TensorRandomStreams& rng, const at::Tensor& degree, int64_t picks) {
  const at::Tensor all = at::ones_like(degree, at::kBool);
  at::Tensor out = at::empty({degree.size(0), picks}, degree.options());
  for (int64_t n = 0; n < picks; ++n) {
    const at::Tensor j = degree - (picks - n);
    const at::Tensor t = rng.uniform(j + 1, all);
    const at::Tensor seen = (out.narrow(1, 0, n) == t.unsqueeze(1)).any(1);
    out.select(1, n).copy_(at::where(seen, j, t));
  }
  return out;
}

// The value scratch[position] holds after the swaps recorded in keys/values[:, :count]
// (scratch starts as the identity): the last write to that position, or the position itself.
at::Tensor swapped_value(const at::Tensor& keys, const at::Tensor& values, int64_t count,
                         const at::Tensor& position) {
  if (count == 0) return position;
  const at::Tensor order = at::arange(1, count + 1, position.options());
  const at::Tensor last = ((keys.narrow(1, 0, count) == position.unsqueeze(1)) * order).amax(1);
  const at::Tensor written =
      values.narrow(1, 0, count).gather(1, (last - 1).clamp_min(0).unsqueeze(1)).squeeze(1);
  return at::where(last > 0, written, position);
}

// The C++ kernel's partial Fisher-Yates over a scratch array of the column's positions,
// keeping only the swaps: step j swaps scratch[j] with scratch[r], r in [j, degree), and picks
// what lands at j. Later steps never read a position below theirs, so a swap records only the
// value that moves to r.
at::Tensor fisher_yates_picks(TensorRandomStreams& rng, const at::Tensor& degree, int64_t picks) {
  const at::Tensor all = at::ones_like(degree, at::kBool);
  at::Tensor out = at::empty({degree.size(0), picks}, degree.options());
  at::Tensor keys = at::empty_like(out);
  at::Tensor values = at::empty_like(out);
  for (int64_t j = 0; j < picks; ++j) {
    const at::Tensor step = at::full_like(degree, j);
    const at::Tensor r = step + rng.uniform(degree - j, all);
    out.select(1, j).copy_(swapped_value(keys, values, j, r));
    values.select(1, j).copy_(swapped_value(keys, values, j, step));
    keys.select(1, j).copy_(r);
  }
  return out;
}

// The first counts[i] CSC positions of each column i (columns start at begin[i]), in order.
at::Tensor leading_positions(const at::Tensor& begin, const at::Tensor& counts) {
  const at::Tensor column = at::repeat_interleave(counts);
  const at::Tensor first_slot = counts.cumsum(0) - counts;
  const int64_t total = column.numel();
  return begin.index_select(0, column) + at::arange(total, begin.options()) -
         first_slot.index_select(0, column);
}

void check_supported(const SampleOptions& options, int64_t fanout, bool has_weights, bool typed) {
  check_fanout(fanout, options.replace, "fanout");
  for (const int64_t type_fanout : options.edge_type_fanouts) {
    check_fanout(type_fanout, options.replace, "edge_type_fanouts");
  }
  if (options.max_picks < 0)
    throw OptionError("max_picks", fmt::format("must be >= 0, got {}", options.max_picks));
  if (options.weighted && !has_weights)
    throw OptionError("weighted", "sampling needs edge weights, but the graph has none");
  if (!options.edge_type_fanouts.empty() && !typed)
    throw OptionError("edge_type_fanouts", "need a graph with edge types (type_per_edge)");
  check_labor_request(options);
  if (options.labor.enabled && options.labor.blend)
    throw OptionError("batch_dependency",
                      "LABOR's batch dependency (normal variates through erfc) is not in the "
                      "tensor sampler: its floating-point functions differ by device; sample on "
                      "the CPU or use batch_dependency 1");
}

// Each segment type's fanout, as the C++ typed kernel reads it: the per-type fanouts when
// given (types beyond them take none), else `fanout` for every type.
std::vector<int64_t> segment_fanouts(const SampleOptions& options, int64_t fanout,
                                     int64_t num_types) {
  std::vector<int64_t> out(static_cast<std::size_t>(num_types), fanout);
  if (options.edge_type_fanouts.empty()) return out;
  for (int64_t r = 0; r < num_types; ++r) {
    const auto& given = options.edge_type_fanouts;
    out[r] = r < static_cast<int64_t>(given.size()) ? given[r] : 0;
  }
  return out;
}

// Temporal sampling: the edges of each segment no later than its seed's time, a prefix (each
// segment is sorted by time), found by binary searches run in lock step: the C++ kernel's
// upper_bound.
at::Tensor usable_edges(const at::Tensor& edge_time, const at::Tensor& begin,
                        const at::Tensor& degree, const at::Tensor& seed_time) {
  if (edge_time.numel() == 0) return at::zeros_like(degree);
  const at::Tensor now = seed_time.unsqueeze(1).expand_as(begin);
  at::Tensor low = begin.clone(), high = begin + degree;
  for (at::Tensor open = low < high; open.any().item<bool>(); open = low < high) {
    const at::Tensor middle = at::bitwise_right_shift(low + high, 1);
    const at::Tensor later =
        edge_time.index_select(0, middle.flatten().clamp_max(edge_time.numel() - 1))
            .view_as(middle) > now;
    low = at::where(open.logical_and(later.logical_not()), middle + 1, low);
    high = at::where(open.logical_and(later), middle, high);
  }
  return low - begin;
}

// LABOR-0's picks in the segments that have more edges than their fanout (the others take
// every edge): edge e of segment s is kept when its source's variate u < fanout / degree, in
// float64 as the C++ kernel compares, so the kept edges are the same on every device.
struct LaborPicks {
  at::Tensor segments;   // flat segment indices that decide by variates
  at::Tensor kept;       // their kept edges' counts
  at::Tensor positions;  // the kept CSC positions, segment by segment in column order
};

LaborPicks labor_picks(const at::Tensor& indices, const LaborVariates& labor,
                       const at::Tensor& begin, const at::Tensor& degree,
                       const at::Tensor& fanout_of) {
  LaborPicks out;
  const at::Tensor fanout = fanout_of.expand_as(degree).flatten();
  const at::Tensor flat_degree = degree.flatten();
  out.segments = (fanout >= 0).logical_and(flat_degree > fanout).nonzero().squeeze(1);
  const at::Tensor segment_degree = flat_degree.index_select(0, out.segments);
  const at::Tensor candidates =
      leading_positions(begin.flatten().index_select(0, out.segments), segment_degree);
  const at::Tensor owner =
      at::arange(out.segments.numel(), degree.options()).repeat_interleave(segment_degree);
  const at::Tensor u = keyed_uniform_real(labor.key, indices.index_select(0, candidates));
  const at::Tensor keep =
      u.mul(segment_degree.index_select(0, owner).to(at::kDouble))
          .lt(fanout.index_select(0, out.segments).index_select(0, owner).to(at::kDouble));
  out.kept = at::zeros_like(segment_degree).index_add_(0, owner, keep.to(at::kLong));
  out.positions = candidates.masked_select(keep);
  return out;
}

// Weighted sampling without replacement above kMaxSuccessivePicks draws Efraimidis-Spirakis
// keys, whose logarithms are not the same bits on every device.
void check_weighted_draws(const SampleOptions& options, const std::vector<int64_t>& fanouts) {
  if (!options.weighted || options.replace) return;
  for (const int64_t fanout : fanouts) {
    if (fanout > kMaxSuccessivePicks)
      throw OptionError(
          "weighted",
          fmt::format("sampling without replacement of more than {} neighbors per node (fanout "
                      "{}) is not in the tensor sampler: the C++ kernel draws them by keys that "
                      "take logarithms, which differ by device; sample on the CPU",
                      kMaxSuccessivePicks, fanout));
  }
}

}  // namespace

TensorNeighborSource::TensorNeighborSource(const graph::CscGraph& graph, c10::Device device,
                                           CscPlacement placement)
    : device_(device), placement_(placement), num_nodes_(graph.num_nodes), host_graph_(graph) {
  require_device(device);
  in_ = place(graph, device, placement);
}

const TensorNeighborSource::Csc& TensorNeighborSource::csc_for(EdgeDirection direction) const {
  if (direction == EdgeDirection::kIn) return in_;
  std::call_once(out_once_,
                 [this] { out_ = place(graph::reverse(host_graph_), device_, placement_); });
  return out_;
}

TensorNeighborSource::Csc TensorNeighborSource::place(const graph::CscGraph& graph,
                                                      c10::Device device, CscPlacement placement) {
  // One entry per edge: copied, or read in place through pinned host memory.
  const auto per_edge = [&](const at::Tensor& host) {
    return placement == CscPlacement::kPinned
               ? host_memory_on_device(host.contiguous(), device, "graph_placement")
               : host.to(device);
  };
  Csc csc;
  csc.indptr = graph.indptr.to(device);
  csc.indices = per_edge(graph.indices);
  if (graph.has_edge_ids()) csc.edge_ids = per_edge(graph.edge_ids);
  if (graph.edge_time.defined()) csc.edge_time = per_edge(graph.edge_time);
  at::Tensor positive_before;  // positive weights before each position, with a leading 0
  if (graph.has_weights()) {
    at::Tensor alias = graph.weight_alias;
    if (!alias.defined()) alias = graph::with_weight_alias(graph).weight_alias;
    positive_before = at::cat({at::zeros({1}, at::kLong), (alias_keep(alias) > 0).cumsum(0)});
    csc.alias = per_edge(alias);
    csc.weights = per_edge(graph.weights);
  }
  // [num_nodes, types + 1]: where each type's segment of a column starts, then its end.
  at::Tensor bounds = at::stack({graph.indptr.slice(0, 0, -1), graph.indptr.slice(0, 1)}, 1);
  if (graph.type_per_edge.defined()) {
    const at::Tensor type = graph.type_per_edge.to(at::kLong);
    csc.num_types = graph.num_edges() > 0 ? type.max().item<int64_t>() + 1 : 1;
    GL_CHECK(type.numel() == 0 || type.min().item<int64_t>() >= 0,
             "type_per_edge holds a negative edge type");
    // Columns are sorted by type: (column, type) keys are sorted over the whole graph.
    const at::Tensor column =
        at::repeat_interleave(graph.indptr.slice(0, 1) - graph.indptr.slice(0, 0, -1));
    const at::Tensor keys = column * csc.num_types + type;
    const at::Tensor queries = at::arange(graph.num_nodes, at::kLong).unsqueeze(1) * csc.num_types +
                               at::arange(csc.num_types + 1, at::kLong);
    bounds = at::searchsorted(keys, queries.flatten()).view({graph.num_nodes, csc.num_types + 1});
    csc.typed = true;
  }
  if (positive_before.defined()) {
    const at::Tensor at_bounds = positive_before.index_select(0, bounds.flatten()).view_as(bounds);
    csc.positive_counts = at_bounds.diff(1, 1).to(device);
  }
  if (csc.typed) csc.segment_bounds = bounds.to(device);
  return csc;
}

SampledEdges TensorNeighborSource::sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                                    const SampleOptions& options) const {
  // Checked before csc_for, which may place the reversed graph.
  check_supported(options, fanout, host_graph_.has_weights(), host_graph_.type_per_edge.defined());
  const bool temporal = options.seed_times.defined();
  if (temporal) check_temporal_request(host_graph_, seeds, options);
  const Csc& csc = csc_for(options.direction);
  const std::vector<int64_t> fanouts = segment_fanouts(options, fanout, csc.num_types);
  check_weighted_draws(options, fanouts);
  GL_CHECK(seeds.scalar_type() == at::kLong && seeds.dim() == 1,
           "seeds must be a 1-D int64 tensor, got {} with {} dims",
           c10::toString(seeds.scalar_type()), seeds.dim());
  const at::Tensor global = seeds.to(device_);
  const at::Tensor local = global - options.first_node;
  const int64_t num_seeds = local.numel();
  if (num_seeds > 0) {
    const int64_t low = local.min().item<int64_t>();
    const int64_t high = local.max().item<int64_t>();
    GL_CHECK_AS(RangeError, low >= 0 && high < num_nodes_, "seed node id {} is outside [{}, {})",
                (low < 0 ? low : high) + options.first_node, options.first_node,
                options.first_node + num_nodes_);
  }
  // Segments: [seeds, types], row-major in the order the C++ kernel fills them.
  const at::Tensor bounds =
      csc.typed
          ? csc.segment_bounds.index_select(0, local)
          : at::stack({csc.indptr.index_select(0, local), csc.indptr.index_select(0, local + 1)},
                      1);
  const at::Tensor begin = bounds.narrow(1, 0, csc.num_types);
  // Temporal sampling picks within each segment's usable prefix as if it were the segment.
  const at::Tensor degree = temporal ? usable_edges(csc.edge_time, begin, bounds.diff(1, 1),
                                                    options.seed_times.to(device_))
                                     : bounds.diff(1, 1);
  const bool weighted = options.weighted;
  // Weighted sampling picks among the positive weights only.
  const at::Tensor available = weighted ? csc.positive_counts.index_select(0, local) : degree;
  const at::Tensor fanout_of = at::tensor(fanouts, at::kLong).to(device_).unsqueeze(0);
  at::Tensor counts = at::where(
      fanout_of < 0, available,
      options.replace ? at::where(available > 0, fanout_of, 0) : at::minimum(available, fanout_of));
  LaborPicks labor;
  if (options.labor.enabled) {
    labor = labor_picks(csc.indices, options.labor, begin, degree, fanout_of);
    counts.view(-1).index_put_({labor.segments}, labor.kept);
  }
  // The counts come from the request: summed on the host with the C++ kernel's checks.
  at::Tensor indptr = at::zeros({num_seeds + 1}, at::kLong);
  indptr.narrow(0, 1, num_seeds).copy_(counts.sum(1));
  sum_pick_counts(indptr.data_ptr<int64_t>(), num_seeds, fanout, options.max_picks);
  SampledEdges out;
  out.indptr = indptr.to(device_);

  // Every pick first takes the next position of its segment; weighted segments of fanout -1
  // take their positive weights.
  const at::Tensor flat_begin = begin.flatten(), flat_counts = counts.flatten();
  at::Tensor positions;
  // Weighted segments with fewer positive weights than a fanout take them all, too.
  at::Tensor takes_every = (fanout_of < 0).expand_as(counts);
  if (weighted && !options.replace) takes_every = takes_every.logical_or(available < fanout_of);
  if (weighted && takes_every.any().item<bool>()) {
    const at::Tensor every = takes_every.flatten();
    const at::Tensor taken = at::where(every, degree.flatten(), flat_counts);
    const at::Tensor candidates = leading_positions(flat_begin, taken);
    const at::Tensor from_every = every.repeat_interleave(taken);
    positions = candidates.masked_select(
        from_every.logical_not().logical_or(alias_keep(csc.alias.index_select(0, candidates)) > 0));
  } else {
    positions = leading_positions(flat_begin, flat_counts);
  }
  const at::Tensor first_slot = flat_counts.cumsum(0) - flat_counts;
  if (options.labor.enabled) {  // no draws: LABOR's segments keep by variates, others take all
    positions.index_put_(
        {leading_positions(first_slot.index_select(0, labor.segments), labor.kept)},
        labor.positions);
  } else if (temporal && options.temporal_strategy == TemporalStrategy::kLast) {
    // The latest usable edges, in time order (every segment below its fanout takes them all).
    positions = leading_positions(flat_begin + degree.flatten() - flat_counts, flat_counts);
  } else {
    draw_picks(csc, global, begin, degree, available, fanouts, options, first_slot, positions);
  }
  out.neighbors = csc.indices.index_select(0, positions).to(at::kLong);
  if (options.edge_ids) {
    out.edge_ids = csc.edge_ids.defined() ? csc.edge_ids.index_select(0, positions) : positions;
  }
  if (csc.typed) {
    const at::Tensor type = at::arange(csc.num_types, at::kLong).to(device_).repeat(num_seeds);
    out.edge_types = type.repeat_interleave(flat_counts);
  }
  return out;
}

// The seeds' streams, served segment by segment in type order as in the C++ kernel: the lanes
// that draw in segment type r run together, and their picks overwrite the leading positions.
void TensorNeighborSource::draw_picks(const Csc& csc, const at::Tensor& global,
                                      const at::Tensor& begin, const at::Tensor& degree,
                                      const at::Tensor& available,
                                      const std::vector<int64_t>& fanouts,
                                      const SampleOptions& options, const at::Tensor& first_slot,
                                      at::Tensor& positions) const {
  std::vector<at::Tensor> drawing(fanouts.size());
  at::Tensor any = at::zeros({global.numel()}, global.options().dtype(at::kBool));
  for (std::size_t r = 0; r < fanouts.size(); ++r) {
    const int64_t f = fanouts[r];
    if (f <= 0) continue;
    const at::Tensor column_available = available.select(1, static_cast<int64_t>(r));
    const at::Tensor column_degree = degree.select(1, static_cast<int64_t>(r));
    drawing[r] = options.replace    ? column_available > 0
                 : options.weighted ? column_available >= f
                                    : column_degree > f;
    any.logical_or_(drawing[r]);
  }
  const at::Tensor seeds_drawing = any.nonzero().squeeze(1);
  if (seeds_drawing.numel() == 0) return;
  TensorRandomStreams streams(
      stream_keys(options.random_key, global.index_select(0, seeds_drawing)));
  // A seed's lane among seeds_drawing.
  const at::Tensor lane_of = at::full({global.numel()}, -1, global.options());
  lane_of.index_put_({seeds_drawing}, at::arange(seeds_drawing.numel(), global.options()));
  for (std::size_t r = 0; r < fanouts.size(); ++r) {
    if (!drawing[r].defined()) continue;
    const int64_t f = fanouts[r];
    const auto type = static_cast<int64_t>(r);
    const at::Tensor seeds_r = drawing[r].nonzero().squeeze(1);
    if (seeds_r.numel() == 0) continue;
    const at::Tensor lanes = lane_of.index_select(0, seeds_r);
    TensorRandomStreams rng = streams.subset(lanes);
    const at::Tensor lane_begin = begin.select(1, type).index_select(0, seeds_r);
    const at::Tensor lane_degree = degree.select(1, type).index_select(0, seeds_r);
    const at::Tensor picked =
        options.weighted && options.replace
            ? weighted_picks_with_replacement(rng, csc.alias, lane_begin, lane_degree, f)
        : options.weighted    ? weighted_picks_without_replacement(rng, csc.alias, csc.weights,
                                                                   lane_begin, lane_degree, f)
        : options.replace     ? picks_with_replacement(rng, lane_degree, f)
        : f <= kFloydMaxPicks ? floyd_picks(rng, lane_degree, f)
                              : fisher_yates_picks(rng, lane_degree, f);
    streams.assign(lanes, rng);
    const at::Tensor segment = seeds_r * csc.num_types + type;
    const at::Tensor slots =
        first_slot.index_select(0, segment).unsqueeze(1) + at::arange(f, global.options());
    positions.index_put_({slots.flatten()}, (lane_begin.unsqueeze(1) + picked).flatten());
  }
}

}  // namespace graphloom::sampling
