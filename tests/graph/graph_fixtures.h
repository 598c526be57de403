// A small graph with a duplicate edge, a self-loop and an isolated node, written out by hand.
#pragma once

#include <ATen/ATen.h>

#include "graphloom/graph/build.h"

namespace graphloom::graph::testing {

// Edges (src -> dst) in input order:
//   e0 0->1, e1 2->1, e2 1->0, e3 3->2, e4 0->2, e5 2->1 (duplicate of e1), e6 1->1 (self-loop)
// Node 3 has no in-edges.
inline CooInput small_coo() {
  CooInput input;
  input.src = at::tensor({0, 2, 1, 3, 0, 2, 1}, at::kLong);
  input.dst = at::tensor({1, 1, 0, 2, 2, 1, 1}, at::kLong);
  input.num_nodes = 4;
  return input;
}

inline std::vector<int64_t> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

}  // namespace graphloom::graph::testing
