// Node -> part assignment: METIS (multi-constraint k-way) or random, and the edge cut.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "graphloom/graph/csc_graph.h"
#include "graphloom/partition/methods.h"

namespace graphloom::partition {

// Throws OptionError("parts") unless 1 <= parts <= num_nodes.
void check_parts(int64_t parts, int64_t num_nodes);

// The scheme kAuto resolves to for `parts`; other schemes are returned as given.
MetisScheme resolve_metis_scheme(MetisScheme scheme, int64_t parts);

struct MetisOptions {
  at::Tensor train_mask;       // bool [num_nodes]: balance train nodes across parts (optional)
  bool balance_edges = false;  // balance in-degree (edges per part) too
  uint64_t seed = 0;
  MetisScheme scheme = MetisScheme::kAuto;
};

// int64 [num_nodes]: the METIS part of each node. METIS partitions the symmetrized graph without
// self-loops, over the nodes that have an edge in it; the nodes without any are then placed on
// the parts with the fewest nodes (train nodes first, on those with the fewest train nodes).
// Throws graphloom::Error when the graph has 2^31 or more adjacency entries (Debian's METIS
// uses 32-bit indices).
at::Tensor assign_metis(const graph::CscGraph& graph, int64_t parts, const MetisOptions& options);

// One-pass streaming assignment: nodes arrive in id order with their in-neighbors (one CSC
// column each) and go to the part that scores best against the parts of the neighbors seen so
// far, given its load. Memory is O(nodes + parts) beyond the graph, which may stay
// memory-mapped.
//   "ldg":    |N(v) in P_i| * (1 - load_i / capacity)   (Stanton & Kliot, 2012)
//   "fennel": |N(v) in P_i| - alpha * gamma * load_i^(gamma - 1), gamma = 1.5   (Tsourakakis
//             et al., 2014), alpha = sqrt(parts) * edges / nodes^1.5
// load_i is the part's node count, or with more constraints (train nodes, in-edges) its
// largest constraint as a multiple of an even share, in node units. No part takes a node that
// would carry one of its constraints past ceil(even share * (1 + slack)) while another part
// has room.
struct StreamOptions {
  StreamAlgorithm algorithm = StreamAlgorithm::kFennel;
  double slack = 0.05;
  at::Tensor train_mask;       // bool [num_nodes]: balance train nodes across parts (optional)
  bool balance_edges = false;  // balance in-degree (edges per part) too
};
at::Tensor assign_stream(const graph::CscGraph& graph, int64_t parts, const StreamOptions& options);

// int64 [num_nodes]: uniformly random parts of (almost) equal sizes, keyed by `seed`.
at::Tensor assign_random(int64_t num_nodes, int64_t parts, uint64_t seed);

// Number of edges whose endpoints lie in different parts.
int64_t edge_cut(const graph::CscGraph& graph, const at::Tensor& assignment);

}  // namespace graphloom::partition
