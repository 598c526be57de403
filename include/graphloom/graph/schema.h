// GraphSchema: the names behind a heterogeneous CscGraph's type ids (DESIGN.md section 3).
// Node type t owns ids node_type_offset[t] .. node_type_offset[t+1]-1; edge type r is the
// canonical triple (source type, relation, destination type) stored in type_per_edge as r.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graphloom/graph/csc_graph.h"

namespace graphloom::graph {

struct EdgeType {
  std::string src;
  std::string relation;
  std::string dst;

  // "src:relation:dst", the unambiguous spelling accepted wherever an edge type is named.
  std::string canonical_name() const;
};

struct GraphSchema {
  std::vector<std::string> node_types;
  std::vector<EdgeType> edge_types;

  bool empty() const { return node_types.empty() && edge_types.empty(); }
  int64_t num_node_types() const { return static_cast<int64_t>(node_types.size()); }
  int64_t num_edge_types() const { return static_cast<int64_t>(edge_types.size()); }

  // Index of a node type by name; throws graphloom::Error listing the known names.
  int64_t node_type_id(const std::string& name) const;
  // Index of an edge type named by its relation (when no other edge type has it) or by
  // "src:relation:dst"; throws graphloom::Error listing the known names, or the candidates of
  // an ambiguous relation.
  int64_t edge_type_id(const std::string& name) const;

  // Checks the schema against a typed graph: node_type_offset has num_node_types + 1
  // increasing entries ending at num_nodes, every type_per_edge value names an edge type, each
  // column's in-edges are sorted by type, and every edge joins the node types of its canonical
  // triple. Throws graphloom::Error naming the first violation.
  void validate(const CscGraph& graph) const;
};

// The node type of each id in `nodes` (int64), found in node_type_offset.
at::Tensor node_types_of(const CscGraph& graph, const at::Tensor& nodes);

// Stable-sorts each column's in-edges by edge type, moving indices, edge ids and weights
// along, so per-edge-type sampling reads one contiguous segment per type.
CscGraph sort_columns_by_edge_type(const CscGraph& graph);

}  // namespace graphloom::graph
