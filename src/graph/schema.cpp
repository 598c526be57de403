// GraphSchema lookups and checks, and the per-column edge-type sort.
#include "graphloom/graph/schema.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/graph/transforms.h"

namespace graphloom::graph {
namespace {

std::string joined_edge_type_names(const std::vector<EdgeType>& types) {
  std::vector<std::string> names;
  for (const EdgeType& type : types) names.push_back(type.canonical_name());
  return names.empty() ? "none: the graph is homogeneous"
                       : fmt::format("{}", fmt::join(names, ", "));
}

// Calls body(types) with type_per_edge as a typed pointer (int8, int16, int32 or int64).
template <typename Body>
void with_edge_types(const at::Tensor& type_per_edge, Body&& body) {
  switch (type_per_edge.scalar_type()) {
    case at::kChar:
      return body(type_per_edge.data_ptr<int8_t>());
    case at::kShort:
      return body(type_per_edge.data_ptr<int16_t>());
    case at::kInt:
      return body(type_per_edge.data_ptr<int32_t>());
    case at::kLong:
      return body(type_per_edge.data_ptr<int64_t>());
    default:
      GL_THROW("type_per_edge must be int8, int16, int32 or int64, got {}",
               c10::toString(type_per_edge.scalar_type()));
  }
}

}  // namespace

std::string EdgeType::canonical_name() const { return src + ":" + relation + ":" + dst; }

int64_t GraphSchema::node_type_id(const std::string& name) const {
  const auto it = std::find(node_types.begin(), node_types.end(), name);
  GL_CHECK(it != node_types.end(), "unknown node type '{}' (the graph has: {})", name,
           node_types.empty() ? "none: the graph is homogeneous"
                              : fmt::format("{}", fmt::join(node_types, ", ")));
  return it - node_types.begin();
}

int64_t GraphSchema::edge_type_id(const std::string& name) const {
  std::vector<int64_t> matches;
  for (int64_t r = 0; r < num_edge_types(); ++r) {
    const EdgeType& type = edge_types[static_cast<std::size_t>(r)];
    if (type.canonical_name() == name) return r;
    if (type.relation == name) matches.push_back(r);
  }
  GL_CHECK(!matches.empty(), "unknown edge type '{}' (the graph has: {})", name,
           joined_edge_type_names(edge_types));
  GL_CHECK(matches.size() == 1,
           "edge type '{}' is ambiguous: name it as src:relation:dst (the graph has: {})", name,
           joined_edge_type_names(edge_types));
  return matches.front();
}

void GraphSchema::validate(const CscGraph& graph) const {
  if (empty()) {
    GL_CHECK(!graph.type_per_edge.defined() && !graph.node_type_offset.defined(),
             "the graph has node or edge types but no type names (node_types, edge_types)");
    return;
  }
  GL_CHECK(!node_types.empty() && !edge_types.empty(),
           "a typed graph needs both node_types and edge_types");
  for (const EdgeType& type : edge_types) {
    node_type_id(type.src);
    node_type_id(type.dst);
  }
  const at::Tensor& offset = graph.node_type_offset;
  GL_CHECK(offset.defined() && offset.scalar_type() == at::kLong &&
               offset.numel() == num_node_types() + 1,
           "node_type_offset must be int64 [num_node_types + 1 = {}]", num_node_types() + 1);
  const int64_t* bound = offset.data_ptr<int64_t>();
  GL_CHECK(bound[0] == 0 && bound[num_node_types()] == graph.num_nodes,
           "node type counts must add up to num_nodes ({}), got {}", graph.num_nodes,
           bound[num_node_types()]);
  for (int64_t t = 0; t < num_node_types(); ++t) {
    GL_CHECK(bound[t] <= bound[t + 1], "node type '{}' has a negative count",
             node_types[static_cast<std::size_t>(t)]);
  }
  GL_CHECK(graph.type_per_edge.defined() && graph.type_per_edge.dim() == 1 &&
               graph.type_per_edge.numel() == graph.num_edges(),
           "type_per_edge must hold one edge type per edge ({})", graph.num_edges());
  const auto type_of_node = [&](int64_t v) {
    return std::upper_bound(bound, bound + num_node_types() + 1, v) - bound - 1;
  };
  const at::Tensor sources = graph.indices.to(at::kLong);
  const int64_t* source = sources.data_ptr<int64_t>();
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  with_edge_types(graph.type_per_edge, [&](const auto* type) {
    for (int64_t v = 0; v < graph.num_nodes; ++v) {
      const int64_t dst_type = type_of_node(v);
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
        const int64_t r = type[e];
        GL_CHECK(r >= 0 && r < num_edge_types(),
                 "type_per_edge: edge type {} at CSC position {} is outside [0, {})", r, e,
                 num_edge_types());
        GL_CHECK(e == indptr[v] || type[e - 1] <= r,
                 "type_per_edge: the in-edges of node {} are not sorted by edge type", v);
        const EdgeType& edge_type = edge_types[static_cast<std::size_t>(r)];
        GL_CHECK(node_types[static_cast<std::size_t>(type_of_node(source[e]))] == edge_type.src &&
                     node_types[static_cast<std::size_t>(dst_type)] == edge_type.dst,
                 "edge {} -> {} has type {} but joins a '{}' node to a '{}' node", source[e], v,
                 edge_type.canonical_name(),
                 node_types[static_cast<std::size_t>(type_of_node(source[e]))],
                 node_types[static_cast<std::size_t>(dst_type)]);
      }
    }
  });
}

at::Tensor node_types_of(const CscGraph& graph, const at::Tensor& nodes) {
  GL_CHECK(graph.node_type_offset.defined(), "the graph has no node types");
  // Node type t owns [offset[t], offset[t+1]): the type is the last offset <= id.
  return at::searchsorted(graph.node_type_offset, nodes, /*out_int32=*/false, /*right=*/true) - 1;
}

CscGraph sort_columns_by_edge_type(const CscGraph& graph) {
  GL_CHECK(graph.type_per_edge.defined(), "sorting by edge type needs type_per_edge");
  const at::Tensor types = graph.type_per_edge.to(at::kLong);
  const int64_t* type = types.data_ptr<int64_t>();
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  at::Tensor order = at::arange(graph.num_edges(), at::kLong);
  int64_t* position = order.data_ptr<int64_t>();
  for (int64_t v = 0; v < graph.num_nodes; ++v) {
    std::stable_sort(position + indptr[v], position + indptr[v + 1],
                     [&](int64_t a, int64_t b) { return type[a] < type[b]; });
  }
  CscGraph out = reorder_within_columns(graph, order);
  if (!graph.has_edge_ids() && order.equal(at::arange(graph.num_edges(), at::kLong))) {
    out.edge_ids = at::Tensor();  // already sorted: positions stay the ids
  }
  return out;
}

}  // namespace graphloom::graph
