// Building a CscGraph from a COO edge list (src, dst) with a parallel, stable counting sort.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "graphloom/graph/csc_graph.h"

namespace graphloom::graph {

struct CooInput {
  at::Tensor src;  // int32|int64 [E] (may be a strided column view of an [E, 2] array)
  at::Tensor dst;  // same dtype and length as src
  int64_t num_nodes = 0;
  at::Tensor weights;         // optional float [E], carried into CSC order
  at::Tensor edge_types;      // optional int8..int64 [E]: typed graph, each column then sorted
  at::Tensor edge_ids;        // optional int64 [E]: ids to record; default: the input position
  at::Tensor edge_time;       // optional int64 [E], carried into CSC order (CscGraph::edge_time)
  bool keep_edge_ids = true;  // false: drop edge ids (the CSC position becomes the id)
};

// Sorts the edges by destination. Within a column, edges keep their input order (stable), or
// with edge types, the order of (type, input position).
// Extra memory besides the output: one count array of num_nodes per thread, capped so that it
// never exceeds the size of the output indices. Throws graphloom::Error naming the first edge
// with an endpoint outside [0, num_nodes).
CscGraph csc_from_coo(const CooInput& input);

}  // namespace graphloom::graph
