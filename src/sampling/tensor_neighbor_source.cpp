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
#include "sampling_limits.h"
#include "tensor_random_streams.h"

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

void check_supported(const SampleOptions& options, int64_t fanout) {
  check_fanout(fanout, options.replace, "fanout");
  if (options.max_picks < 0)
    throw OptionError("max_picks", fmt::format("must be >= 0, got {}", options.max_picks));
  if (options.weighted)
    throw OptionError("weighted", "sampling is not in the tensor sampler yet; sample on the CPU");
  if (!options.edge_type_fanouts.empty())
    throw OptionError("edge_type_fanouts",
                      "typed graphs are not in the tensor sampler yet; sample on the CPU");
  if (options.direction != EdgeDirection::kIn)
    throw OptionError("direction",
                      "out-edge sampling is not in the tensor sampler yet; sample on the CPU");
  if (options.labor.enabled)
    throw OptionError("sampler", "LABOR is not in the tensor sampler yet; sample on the CPU");
}

}  // namespace

TensorNeighborSource::TensorNeighborSource(const graph::CscGraph& graph, c10::Device device)
    : device_(device), num_nodes_(graph.num_nodes) {
  require_device(device);
  GL_CHECK(!graph.type_per_edge.defined(),
           "the tensor sampler does not sample typed graphs yet (type_per_edge is set)");
  indptr_ = graph.indptr.to(device);
  indices_ = graph.indices.to(device);
  if (graph.has_edge_ids()) edge_ids_ = graph.edge_ids.to(device);
}

SampledEdges TensorNeighborSource::sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                                    const SampleOptions& options) const {
  check_supported(options, fanout);
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
  const at::Tensor begin = indptr_.index_select(0, local);
  const at::Tensor degree = indptr_.index_select(0, local + 1) - begin;
  at::Tensor counts = degree;
  if (fanout >= 0) {
    counts = options.replace ? at::where(degree > 0, fanout, 0) : at::clamp_max(degree, fanout);
  }
  // The counts come from the request: summed on the host with the C++ kernel's checks.
  at::Tensor indptr = at::zeros({num_seeds + 1}, at::kLong);
  indptr.narrow(0, 1, num_seeds).copy_(counts);
  sum_pick_counts(indptr.data_ptr<int64_t>(), num_seeds, fanout, options.max_picks);
  const int64_t total = indptr[num_seeds].item<int64_t>();

  SampledEdges out;
  out.indptr = indptr.to(device_);
  const at::Tensor seed_of_pick = at::repeat_interleave(counts);
  at::Tensor positions = begin.index_select(0, seed_of_pick) + at::arange(total, begin.options()) -
                         out.indptr.index_select(0, seed_of_pick);
  if (fanout > 0) {
    const at::Tensor drawing = options.replace ? degree > 0 : degree > fanout;
    const at::Tensor lanes = drawing.nonzero().squeeze(1);
    if (lanes.numel() > 0) {
      TensorRandomStreams rng(stream_keys(options.random_key, global.index_select(0, lanes)));
      const at::Tensor lane_degree = degree.index_select(0, lanes);
      const at::Tensor picked = options.replace ? picks_with_replacement(rng, lane_degree, fanout)
                                : fanout <= kFloydMaxPicks
                                    ? floyd_picks(rng, lane_degree, fanout)
                                    : fisher_yates_picks(rng, lane_degree, fanout);
      const at::Tensor slots =
          out.indptr.index_select(0, lanes).unsqueeze(1) + at::arange(fanout, begin.options());
      positions.index_put_({slots.flatten()},
                           (begin.index_select(0, lanes).unsqueeze(1) + picked).flatten());
    }
  }
  out.neighbors = indices_.index_select(0, positions).to(at::kLong);
  if (options.edge_ids) {
    out.edge_ids = edge_ids_.defined() ? edge_ids_.index_select(0, positions) : positions;
  }
  return out;
}

}  // namespace graphloom::sampling
