// Small graphs for sampler tests.
#pragma once

#include <ATen/ATen.h>

#include "graphloom/graph/build.h"

namespace graphloom::sampling::testing {

// Node 0 has in-edges from nodes 1..degree (edge i-1 comes from node i); the others have none.
inline graph::CscGraph star_graph(int64_t degree, at::Tensor weights = {}) {
  graph::CooInput input;
  input.src = at::arange(1, degree + 1, at::kLong);
  input.dst = at::zeros({degree}, at::kLong);
  input.num_nodes = degree + 1;
  input.weights = weights;
  input.keep_edge_ids = false;
  return graph::csc_from_coo(input);
}

// A random directed graph (fixed seed) for structural checks.
inline graph::CscGraph random_graph(int64_t nodes, int64_t edges, uint64_t seed = 1) {
  at::manual_seed(seed);
  graph::CooInput input;
  input.src = at::randint(nodes, {edges}, at::kLong);
  input.dst = at::randint(nodes, {edges}, at::kLong);
  input.num_nodes = nodes;
  input.keep_edge_ids = false;
  return graph::csc_from_coo(input);
}

// Pearson's chi-square statistic of observed counts against expected probabilities.
inline double chi_square(const std::vector<int64_t>& observed, const std::vector<double>& p) {
  int64_t total = 0;
  for (int64_t o : observed) total += o;
  double statistic = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    const double expected = p[i] * static_cast<double>(total);
    statistic += (observed[i] - expected) * (observed[i] - expected) / expected;
  }
  return statistic;
}

}  // namespace graphloom::sampling::testing
