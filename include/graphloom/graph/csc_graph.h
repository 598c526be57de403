// CscGraph: the in-edges of every node in compressed sparse column form. Column v holds the
// sources of the edges that point to v; message passing and neighbor sampling read columns.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace graphloom::graph {

struct CscGraph {
  int64_t num_nodes = 0;
  // int64 [num_nodes + 1]: the in-edges of node v are positions indptr[v] .. indptr[v+1]-1.
  at::Tensor indptr;
  // int32 when num_nodes < 2^31, else int64 [num_edges]: source node of each in-edge.
  at::Tensor indices;
  // Optional int64 [num_edges]: the id of each edge in the original edge list. When undefined,
  // an edge's id is its CSC position.
  at::Tensor edge_ids;
  // Optional float32/float64 [num_edges]: edge weights in CSC order.
  at::Tensor weights;
  // Optional int64 [num_edges], made from `weights` by with_weight_alias() (weight_alias.h):
  // the alias table of every column (of every edge-type segment in typed graphs), with which
  // weighted sampling picks an edge in O(1) instead of reading the column's weights.
  at::Tensor weight_alias;
  // Whether every weight behind weight_alias is positive (with_weight_alias sets it): weighted
  // sampling then counts a column's picks from its degree, as uniform sampling does, without
  // reading its table. False is always safe.
  bool weight_alias_all_positive = false;
  // Optional (heterogeneous graphs) int64 [num_node_types + 1]: nodes are sorted by type and
  // type t owns ids node_type_offset[t] .. node_type_offset[t+1]-1.
  at::Tensor node_type_offset;
  // Optional (heterogeneous graphs) int8/int16/int32 [num_edges]: edge type of each in-edge;
  // each column is sorted by edge type.
  at::Tensor type_per_edge;
  // Optional int64 [num_edges]: the time from which each in-edge may be sampled. Temporal
  // sampling needs each column sorted by it (graph::sorted_by_time, temporal.h).
  at::Tensor edge_time;

  int64_t num_edges() const;
  bool has_edge_ids() const { return edge_ids.defined(); }
  bool has_weights() const { return weights.defined(); }

  // Checks shapes, dtypes, monotonic indptr and indices in [0, num_nodes); throws
  // graphloom::Error describing the first violation.
  void validate() const;

  // int64 [num_nodes]: in-degree of every node.
  at::Tensor in_degrees() const;
  // int64 [num_nodes]: out-degree of every node (a bincount over indices).
  at::Tensor out_degrees() const;
  // The ids of the edges in CSC order (edge_ids, or 0..E-1 when absent).
  at::Tensor edge_ids_or_positions() const;
  // int64 [num_edges]: the destination (column) of each CSC position.
  at::Tensor destinations() const;
};

// int64 [num_nodes]: how often each node appears in `ids` (int32 or int64, each in
// [0, num_nodes), as a CSC's indices are), without an int64 copy of int32 ids.
at::Tensor count_node_ids(const at::Tensor& ids, int64_t num_nodes);

// The narrowest index dtype that can hold node ids below `num_nodes`.
c10::ScalarType index_dtype_for(int64_t num_nodes);

}  // namespace graphloom::graph
