// NeighborSource: where one hop of neighbor sampling reads the graph (DESIGN.md section 1).
// The multi-layer sampler is written once against it; local and distributed graphs differ
// only in the source.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace graphloom::sampling {

enum class EdgeDirection { kIn, kOut };

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
};

// Picked neighbors of each seed, in seed order.
struct SampledEdges {
  at::Tensor indptr;      // int64 [num_seeds + 1]
  at::Tensor neighbors;   // int64 [num_picks]: global node ids
  at::Tensor edge_ids;    // int64 [num_picks]: global edge ids (unless SampleOptions omits them)
  at::Tensor edge_types;  // int64 [num_picks]: edge type of each pick (typed graphs only)
};

class NeighborSource {
 public:
  virtual ~NeighborSource() = default;
  virtual int64_t num_nodes() const = 0;
  // `fanout` picks per seed (-1: all neighbors). Without replacement a seed with degree <= fanout
  // gets all its neighbors; weighted sampling never picks an edge of weight 0.
  // Throws graphloom::Error for seeds outside [0, num_nodes()) or unavailable weights.
  virtual SampledEdges sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                        const SampleOptions& options) const = 0;
};

}  // namespace graphloom::sampling
