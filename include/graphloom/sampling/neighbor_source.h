// NeighborSource: where one hop of neighbor sampling reads the graph (DESIGN.md section 1).
// The multi-layer sampler is written once against it; local and distributed graphs differ
// only in the source.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "graphloom/base/enum_names.h"
#include "graphloom/sampling/labor.h"

namespace graphloom::sampling {

enum class EdgeDirection { kIn, kOut };

// Which of a seed's usable edges temporal sampling picks (PyG's temporal_strategy).
enum class TemporalStrategy {
  kUniform,  // `fanout` of them uniformly at random
  kLast,     // the `fanout` most recent ones
};

// With replacement every seed gets exactly `fanout` picks whatever its degree, so the fanout
// alone sizes the output: above this bound one seed's picks fill 16 MiB (a neighbor and an edge
// id, 8 bytes each), a quarter of a graph server's default message limit, and repeat each of
// its neighbors thousands of times over. Without replacement a seed gets at most its degree.
constexpr int64_t kMaxReplacementFanout = int64_t{1} << 20;
// The default of SampleOptions::max_picks: 4 GiB of neighbors and edge ids.
constexpr int64_t kDefaultMaxPicks = int64_t{1} << 28;

struct SampleOptions {
  bool replace = false;   // with replacement: exactly `fanout` picks for every node with edges
  bool weighted = false;  // pick proportionally to the graph's edge weights
  EdgeDirection direction = EdgeDirection::kIn;
  // Key of this call's random streams; each node draws from stream_key({random_key, node}), so
  // results do not depend on thread count or on which other nodes are in the call.
  uint64_t random_key = 0;
  // Global id of the graph's column 0 when the graph is one partition's CSC (owned nodes as
  // columns): seeds are then global ids in [first_node, first_node + num_nodes) and streams are
  // keyed by the global id, so a part samples exactly what the whole graph would.
  int64_t first_node = 0;
  // Typed graphs (type_per_edge): picks per edge type, indexed by edge type id; types past the
  // end get none. Empty: `fanout` picks for every edge type (DGL's int fanout on a heterograph).
  std::vector<int64_t> edge_type_fanouts;
  // Return each pick's global edge id; when false, SampledEdges::edge_ids is left undefined and
  // remote sources neither compute nor send them.
  bool edge_ids = true;
  // The most picks one call may return. The picks per seed are counted and summed with
  // overflow checks before anything is allocated; a call over the limit throws LimitError
  // (field "max_picks") instead of exhausting memory. Graph servers set it from their message
  // limit and per-request memory budget.
  int64_t max_picks = kDefaultMaxPicks;
  // LABOR-0 in place of per-seed picks when enabled: a seed of degree d keeps each neighbor t
  // with labor_variate(labor, t) < fanout / d (all of them when d <= fanout), so the number
  // of picks varies around `fanout`. Needs replace = false and weighted = false.
  LaborVariates labor;
  // Temporal sampling when defined: int64 [num_seeds], the time of each seed. Seed i then picks
  // only among the edges of CscGraph::edge_time <= seed_times[i] (the graph must be
  // graph::sorted_by_time), by `temporal_strategy`. Needs weighted = false, no LABOR, in-edges
  // and an untyped graph.
  at::Tensor seed_times;
  TemporalStrategy temporal_strategy = TemporalStrategy::kUniform;
};

// Picked neighbors of each seed, in seed order.
struct SampledEdges {
  at::Tensor indptr;      // int64 [num_seeds + 1]
  at::Tensor neighbors;   // int64 [num_picks]: global node ids
  at::Tensor edge_ids;    // int64 [num_picks]: global edge ids (unless SampleOptions omits them)
  at::Tensor edge_types;  // int64 [num_picks]: edge type of each pick (typed graphs only)
  // float32 [num_picks], LABOR-* only (labor_importance.h): each pick's importance weight.
  at::Tensor weights;
};

class NeighborSource {
 public:
  virtual ~NeighborSource() = default;
  virtual int64_t num_nodes() const = 0;
  // `fanout` picks per seed (-1: all neighbors). Without replacement a seed with degree <= fanout
  // gets all its neighbors; weighted sampling never picks an edge of weight 0.
  // Throws graphloom::Error for seeds outside [0, num_nodes()) or unavailable weights, and
  // LimitError for a call of more than options.max_picks picks.
  virtual SampledEdges sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                        const SampleOptions& options) const = 0;
};

}  // namespace graphloom::sampling

namespace graphloom {

template <>
struct EnumNames<sampling::TemporalStrategy> {
  static constexpr std::array<std::pair<std::string_view, sampling::TemporalStrategy>, 2> kNames{
      {{"uniform", sampling::TemporalStrategy::kUniform},
       {"last", sampling::TemporalStrategy::kLast}}};
};

}  // namespace graphloom
