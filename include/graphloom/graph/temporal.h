// Time-ordered columns for temporal neighbor sampling (PyG's NeighborLoader(time_attr=...),
// GraphBolt's TemporalNeighborSampler): a seed at time t may only reach edges usable at t, and
// with each column sorted by the time its edges become usable those edges are a prefix of the
// column, found by one binary search, so a hub costs log(degree), not its degree.
#pragma once

#include <ATen/core/Tensor.h>

#include "graphloom/graph/csc_graph.h"

namespace graphloom::graph {

// The graph with every column stably sorted by the time from which its edges may be sampled,
// kept in CscGraph::edge_time: an edge's own time (`edge_time`, int64 [num_edges] in CSC
// order) and its source's (`node_time`, int64 [num_nodes]), the later of the two where both
// are given (PyG's node time_attr: a neighbor no later than the seed). At least one must be
// defined. Edge ids, weights and indices follow the sort (edge ids are materialized, so ids
// stay those of the original graph); alias tables are dropped (rebuilt on demand). Typed
// graphs' columns stay sorted by edge type, each type segment sorted by time. Throws
// graphloom::Error on wrong lengths or dtypes.
CscGraph sorted_by_time(const CscGraph& graph, const at::Tensor& node_time,
                        const at::Tensor& edge_time);

}  // namespace graphloom::graph
