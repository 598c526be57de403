// CscGraph accessors and validation.
#include "graphloom/graph/csc_graph.h"

#include <ATen/ATen.h>

#include <limits>

#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"

namespace graphloom::graph {

int64_t CscGraph::num_edges() const { return indices.defined() ? indices.numel() : 0; }

c10::ScalarType index_dtype_for(int64_t num_nodes) {
  return num_nodes <= std::numeric_limits<int32_t>::max() ? at::kInt : at::kLong;
}

void CscGraph::validate() const {
  GL_CHECK(num_nodes >= 0, "graph: num_nodes must be >= 0, got {}", num_nodes);
  GL_CHECK(indptr.defined() && indptr.scalar_type() == at::kLong && indptr.dim() == 1 &&
               indptr.numel() == num_nodes + 1,
           "graph: indptr must be int64 [num_nodes + 1 = {}]", num_nodes + 1);
  GL_CHECK(indices.defined() && indices.dim() == 1, "graph: indices must be a 1-D tensor");
  const int64_t* ptr = indptr.data_ptr<int64_t>();
  GL_CHECK(ptr[0] == 0 && ptr[num_nodes] == indices.numel(),
           "graph: indptr must start at 0 and end at num_edges ({}), got {} .. {}", indices.numel(),
           ptr[0], ptr[num_nodes]);
  for (int64_t v = 0; v < num_nodes; ++v) {
    GL_CHECK(ptr[v] <= ptr[v + 1], "graph: indptr decreases at node {} ({} > {})", v, ptr[v],
             ptr[v + 1]);
  }
  dispatch_index_type(indices.scalar_type(), "graph: indices", [&](auto tag) {
    using T = decltype(tag);
    const T* idx = indices.data_ptr<T>();
    for (int64_t e = 0; e < indices.numel(); ++e) {
      GL_CHECK(idx[e] >= 0 && idx[e] < num_nodes,
               "graph: source id {} at CSC position {} is outside [0, {})",
               static_cast<int64_t>(idx[e]), e, num_nodes);
    }
  });
  const int64_t edges = num_edges();
  if (edge_ids.defined()) {
    GL_CHECK(edge_ids.scalar_type() == at::kLong && edge_ids.numel() == edges,
             "graph: edge_ids must be int64 [num_edges = {}]", edges);
  }
  if (weights.defined()) {
    GL_CHECK(weights.is_floating_point() && weights.numel() == edges,
             "graph: weights must be floating point [num_edges = {}], got {} values", edges,
             weights.numel());
  }
  if (weight_alias.defined()) {
    GL_CHECK(weight_alias.scalar_type() == at::kLong && weight_alias.numel() == edges,
             "graph: weight_alias must be int64 [num_edges = {}], got {} values", edges,
             weight_alias.numel());
  }
  if (type_per_edge.defined()) {
    GL_CHECK(type_per_edge.numel() == edges, "graph: type_per_edge must have num_edges = {} values",
             edges);
  }
  if (edge_time.defined()) {
    GL_CHECK(edge_time.scalar_type() == at::kLong && edge_time.numel() == edges,
             "graph: edge_time must be int64 [num_edges = {}]", edges);
  }
}

at::Tensor CscGraph::in_degrees() const { return indptr.slice(0, 1) - indptr.slice(0, 0, -1); }

at::Tensor CscGraph::out_degrees() const { return count_node_ids(indices, num_nodes); }

// Counted in place: a bincount would first widen int32 ids to int64, 8 bytes per edge (537 MB
// for R-MAT scale 22, half of a 1 GiB cap).
at::Tensor count_node_ids(const at::Tensor& ids, int64_t num_nodes) {
  at::Tensor counts = at::zeros({num_nodes}, at::kLong);
  int64_t* count = counts.data_ptr<int64_t>();
  const at::Tensor values = ids.contiguous();
  dispatch_index_type(values.scalar_type(), "node ids", [&](auto tag) {
    const auto* id = values.data_ptr<decltype(tag)>();
    for (int64_t e = 0, n = values.numel(); e < n; ++e) ++count[id[e]];
  });
  return counts;
}

at::Tensor CscGraph::edge_ids_or_positions() const {
  return edge_ids.defined() ? edge_ids : at::arange(num_edges(), at::kLong);
}

at::Tensor CscGraph::destinations() const {
  return at::repeat_interleave(at::arange(num_nodes, at::kLong), in_degrees());
}

}  // namespace graphloom::graph
