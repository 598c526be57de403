// Sorting each column by edge time: one stable sort per column, parallel over columns, then one
// gather of every per-edge array through the resulting permutation.
#include "graphloom/graph/temporal.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "graphloom/base/error.h"
#include "graphloom/graph/transforms.h"

namespace graphloom::graph {
namespace {

// `times` as int64 [expected], or a graphloom::Error naming `what`.
at::Tensor checked_times(const at::Tensor& times, int64_t expected, const char* what) {
  GL_CHECK(
      times.dim() == 1 && (times.scalar_type() == at::kLong || times.scalar_type() == at::kInt),
      "{}: expected a 1-D int64 (or int32) tensor, got {} with {} dims", what,
      c10::toString(times.scalar_type()), times.dim());
  GL_CHECK(times.numel() == expected, "{}: expected {} values, got {}", what, expected,
           times.numel());
  return times.to(at::kLong).contiguous();
}

}  // namespace

CscGraph sorted_by_time(const CscGraph& graph, const at::Tensor& node_time,
                        const at::Tensor& edge_time) {
  GL_CHECK(node_time.defined() || edge_time.defined(),
           "temporal sampling needs node times or edge times (node_timestamp or edge_timestamp)");
  const int64_t num_edges = graph.num_edges();
  at::Tensor key;
  if (edge_time.defined()) key = checked_times(edge_time, num_edges, "edge times");
  if (node_time.defined()) {
    const at::Tensor source_time = checked_times(node_time, graph.num_nodes, "node times")
                                       .index_select(0, graph.indices.to(at::kLong));
    key = key.defined() ? at::maximum(key, source_time) : source_time;
  }
  const int64_t* time = key.data_ptr<int64_t>();
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  at::Tensor order = at::arange(num_edges, at::kLong);
  int64_t* position = order.data_ptr<int64_t>();
  // Typed columns stay sorted by edge type (the samplers read type segments) and are sorted by
  // time within each segment.
  const at::Tensor types =
      graph.type_per_edge.defined() ? graph.type_per_edge.to(at::kLong).contiguous() : at::Tensor();
  const int64_t* type = types.defined() ? types.data_ptr<int64_t>() : nullptr;
#pragma omp parallel for schedule(dynamic, 4096)
  for (int64_t v = 0; v < graph.num_nodes; ++v) {
    std::stable_sort(position + indptr[v], position + indptr[v + 1], [&](int64_t a, int64_t b) {
      if (type != nullptr && type[a] != type[b]) return type[a] < type[b];
      return time[a] < time[b];
    });
  }
  CscGraph with_key = graph;
  with_key.edge_time = key;
  return reorder_within_columns(with_key, order);
}

}  // namespace graphloom::graph
