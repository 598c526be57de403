// Link-prediction splits (PyG's RandomLinkSplit, DGL's edge split recipes): held-out positive
// edges with as many sampled non-edges, and the graph message passing may see, from which the
// held-out edges and their reverses are removed so a model never sees what it must predict.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "graphloom/graph/csc_graph.h"
#include "graphloom/io/dataset.h"

namespace graphloom::io {

struct LinkSplitOptions {
  double valid_fraction = 0.05;
  double test_fraction = 0.1;
  uint64_t seed = 0;
};

// A copy of `dataset` with edge_splits train/valid/test (positives: each undirected pair once,
// as (u, v) with u < v, when the dataset is undirected), valid_neg/test_neg (uniform non-edges,
// as many as the positives, disjoint) and `graph` = the training edges only.
Dataset make_link_splits(const Dataset& dataset, const LinkSplitOptions& options);

// The graph of node `pairs` [M, 2]: each pair as the edge (u -> v), and (v -> u) too when
// `both_directions` (undirected positives). Duplicates are merged.
graph::CscGraph graph_of_pairs(const at::Tensor& pairs, int64_t num_nodes, bool both_directions);

}  // namespace graphloom::io
