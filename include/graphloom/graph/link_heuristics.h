// Classic link-prediction heuristics, the baselines a learned model must beat (the lp_*
// datasets report the common-neighbour AUC of their test split).
#pragma once

#include <ATen/core/Tensor.h>

#include "graphloom/graph/csc_graph.h"

namespace graphloom::graph {

// For each pair (u, v) of `pairs` [M, 2]: how many distinct nodes are in-neighbors of both
// (on a symmetric graph: common neighbours). float32 [M].
at::Tensor common_neighbor_counts(const CscGraph& graph, const at::Tensor& pairs);

}  // namespace graphloom::graph
