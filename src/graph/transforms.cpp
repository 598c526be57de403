// Graph transforms written with ATen array ops over the CSC arrays: they run once per dataset,
// so clarity wins over a hand-written kernel here.
#include "graphloom/graph/transforms.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"

namespace graphloom::graph {
namespace {

// The graph made of the edges at CSC positions `order` (grouped by column), with `indptr`.
// Edge ids always follow the kept edges, so they keep naming the original edges.
CscGraph select_edges(const CscGraph& graph, const at::Tensor& indptr, const at::Tensor& order) {
  CscGraph out;
  out.num_nodes = graph.num_nodes;
  out.indptr = indptr;
  out.indices = graph.indices.index_select(0, order);
  out.edge_ids = graph.has_edge_ids() ? graph.edge_ids.index_select(0, order) : order;
  if (graph.has_weights()) out.weights = graph.weights.index_select(0, order);
  if (graph.type_per_edge.defined()) out.type_per_edge = graph.type_per_edge.index_select(0, order);
  if (graph.edge_time.defined()) out.edge_time = graph.edge_time.index_select(0, order);
  out.node_type_offset = graph.node_type_offset;
  return out;
}

at::Tensor indptr_from_columns(const at::Tensor& columns, int64_t num_nodes) {
  const at::Tensor counts = at::bincount(columns, /*weights=*/{}, /*minlength=*/num_nodes);
  return at::cat({at::zeros({1}, at::kLong), at::cumsum(counts, 0)});
}

}  // namespace

CscGraph reverse(const CscGraph& graph) {
  CooInput input;
  input.src = graph.destinations().to(graph.indices.scalar_type());
  input.dst = graph.indices;
  input.num_nodes = graph.num_nodes;
  input.weights = graph.weights;
  input.edge_ids = graph.edge_ids;         // undefined: input positions are the ids, as in `graph`
  input.edge_types = graph.type_per_edge;  // typed: each column grouped by type again
  CscGraph out = csc_from_coo(input);
  out.node_type_offset = graph.node_type_offset;
  return out;
}

CscGraph to_bidirected(const CscGraph& graph, bool remove_self_loops) {
  // Destinations in the index dtype directly: no int64 copy of a whole edge array.
  const at::Tensor dst = at::repeat_interleave(at::arange(graph.num_nodes, graph.indices.options()),
                                               graph.in_degrees(), /*dim=*/0,
                                               /*output_size=*/graph.num_edges());
  CooInput input;
  input.src = at::cat({graph.indices, dst});
  input.dst = at::cat({dst, graph.indices});
  input.num_nodes = graph.num_nodes;
  input.keep_edge_ids = false;
  CscGraph out = dedupe(csc_from_coo(input), remove_self_loops);
  out.edge_ids = at::Tensor();
  out.node_type_offset = graph.node_type_offset;
  return out;
}

CscGraph add_self_loops(const CscGraph& graph, double self_loop_weight) {
  const at::Tensor nodes = at::arange(graph.num_nodes, at::kLong);
  const at::Tensor dst = graph.destinations();
  const auto index_type = graph.indices.scalar_type();
  CooInput input;
  // Loops come after the existing edges in input order; the stable sort keeps them last.
  input.src = at::cat({graph.indices, nodes.to(index_type)});
  input.dst = at::cat({dst.to(index_type), nodes.to(index_type)});
  input.num_nodes = graph.num_nodes;
  const at::Tensor ids = graph.edge_ids_or_positions();
  const int64_t first_new_id = ids.numel() > 0 ? ids.max().item<int64_t>() + 1 : 0;
  input.edge_ids =
      at::cat({ids, at::arange(first_new_id, first_new_id + graph.num_nodes, at::kLong)});
  if (graph.has_weights()) {
    input.weights = at::cat(
        {graph.weights, at::full({graph.num_nodes}, self_loop_weight, graph.weights.options())});
  }
  if (graph.edge_time.defined()) {  // a node's loop is there as long as the node is
    input.edge_time =
        at::cat({graph.edge_time, at::full({graph.num_nodes}, std::numeric_limits<int64_t>::min(),
                                           graph.edge_time.options())});
  }
  CscGraph out = csc_from_coo(input);
  out.node_type_offset = graph.node_type_offset;
  return out;
}

CscGraph remove_self_loops(const CscGraph& graph) {
  const at::Tensor dst = graph.destinations();
  const at::Tensor keep = graph.indices.to(at::kLong) != dst;
  const at::Tensor order = keep.nonzero().squeeze(1);
  return select_edges(graph, indptr_from_columns(dst.index_select(0, order), graph.num_nodes),
                      order);
}

namespace {

// Sorts each column by (source, position) and keeps the first of every run of equal sources.
// Two passes over the columns (count, then write) with thread-local scratch: memory is the
// output plus one column, not a global sort of 64-bit keys.
template <typename Index>
CscGraph dedupe_columns(const CscGraph& graph, bool remove_self_loops) {
  const int64_t n = graph.num_nodes;
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  const Index* indices = graph.indices.data_ptr<Index>();
  // Calls keep(position) for the first edge of every distinct source of column v, in source
  // order. Both passes below go through it, so they agree on what is kept.
  auto for_each_kept = [&](int64_t v, std::vector<std::pair<Index, int64_t>>& scratch,
                           auto&& keep) {
    scratch.clear();
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
      if (!remove_self_loops || indices[e] != v) scratch.emplace_back(indices[e], e);
    }
    std::sort(scratch.begin(), scratch.end());
    for (std::size_t i = 0; i < scratch.size(); ++i) {
      if (i == 0 || scratch[i].first != scratch[i - 1].first) keep(scratch[i].second);
    }
  };
  at::Tensor new_indptr = at::zeros({n + 1}, at::kLong);
  int64_t* out_ptr = new_indptr.data_ptr<int64_t>();
#pragma omp parallel
  {
    std::vector<std::pair<Index, int64_t>> scratch;
#pragma omp for schedule(dynamic, 256)
    for (int64_t v = 0; v < n; ++v) {
      for_each_kept(v, scratch, [&](int64_t) { ++out_ptr[v + 1]; });
    }
  }
  for (int64_t v = 0; v < n; ++v) out_ptr[v + 1] += out_ptr[v];
  at::Tensor kept = at::empty({out_ptr[n]}, at::kLong);  // CSC positions of the kept edges
  int64_t* keep = kept.data_ptr<int64_t>();
#pragma omp parallel
  {
    std::vector<std::pair<Index, int64_t>> scratch;
#pragma omp for schedule(dynamic, 256)
    for (int64_t v = 0; v < n; ++v) {
      int64_t o = out_ptr[v];
      for_each_kept(v, scratch, [&](int64_t position) { keep[o++] = position; });
    }
  }
  return select_edges(graph, new_indptr, kept);
}

}  // namespace

CscGraph dedupe(const CscGraph& graph, bool remove_self_loops) {
  return dispatch_index_type(graph.indices.scalar_type(), "graph indices", [&](auto tag) {
    return dedupe_columns<decltype(tag)>(graph, remove_self_loops);
  });
}

CscGraph reorder_within_columns(const CscGraph& graph, const at::Tensor& order) {
  GL_CHECK(order.scalar_type() == at::kLong && order.numel() == graph.num_edges(),
           "reorder_within_columns: order must be int64 [num_edges = {}]", graph.num_edges());
  return select_edges(graph, graph.indptr, order);
}

}  // namespace graphloom::graph
