// Node -> part assignment: METIS (multi-constraint k-way) or random, and the edge cut.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "graphloom/graph/csc_graph.h"

namespace graphloom::partition {

struct MetisOptions {
  at::Tensor train_mask;       // bool [num_nodes]: balance train nodes across parts (optional)
  bool balance_edges = false;  // balance in-degree (edges per part) too
  uint64_t seed = 0;
};

// int64 [num_nodes]: METIS k-way part of each node, on the symmetrized graph without
// self-loops (isolated nodes are balanced by the node-count constraint). Throws
// graphloom::Error when the graph has 2^31 or more adjacency entries (Debian's METIS uses
// 32-bit indices).
at::Tensor assign_metis(const graph::CscGraph& graph, int64_t parts, const MetisOptions& options);

// int64 [num_nodes]: uniformly random parts of (almost) equal sizes, keyed by `seed`.
at::Tensor assign_random(int64_t num_nodes, int64_t parts, uint64_t seed);

// Number of edges whose endpoints lie in different parts.
int64_t edge_cut(const graph::CscGraph& graph, const at::Tensor& assignment);

}  // namespace graphloom::partition
