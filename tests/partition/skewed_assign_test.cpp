// Assignment on small skewed graphs written out by hand: METIS with most nodes isolated, and
// streaming on a graph whose hubs come first in id order (as R-MAT's do).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "graphloom/graph/build.h"
#include "graphloom/partition/assign.h"

namespace graphloom::partition {
namespace {

graph::CscGraph from_edges(int64_t nodes, const std::vector<std::pair<int64_t, int64_t>>& edges) {
  std::vector<int64_t> src;
  std::vector<int64_t> dst;
  for (const auto& [s, d] : edges) src.push_back(s), dst.push_back(d);
  graph::CooInput input;
  input.src = at::tensor(src, at::kLong);
  input.dst = at::tensor(dst, at::kLong);
  input.num_nodes = nodes;
  return graph::csc_from_coo(input);
}

// max / mean of what each part holds, `weight[v]` per node.
double imbalance(const at::Tensor& assignment, int64_t parts, const at::Tensor& weight) {
  const at::Tensor per_part = at::zeros({parts}, at::kDouble).index_add_(0, assignment, weight);
  return per_part.max().item<double>() / per_part.mean().item<double>();
}
double node_imbalance(const at::Tensor& assignment, int64_t parts) {
  return imbalance(assignment, parts, at::ones({assignment.numel()}, at::kDouble));
}
double edge_imbalance(const graph::CscGraph& graph, const at::Tensor& assignment, int64_t parts) {
  return imbalance(assignment, parts, graph.in_degrees().to(at::kDouble));
}

// Two rings of 30 nodes (ids 0..59), a self-loop on node 60, and 340 nodes without edges.
graph::CscGraph rings_and_isolated_nodes() {
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t ring = 0; ring < 2; ++ring) {
    for (int64_t i = 0; i < 30; ++i) edges.emplace_back(ring * 30 + i, ring * 30 + (i + 1) % 30);
  }
  edges.emplace_back(60, 60);
  return from_edges(400, edges);
}

TEST(SkewedAssign, MetisPlacesNodesWithoutEdgesWhereTheyEvenOutTheParts) {
  const graph::CscGraph graph = rings_and_isolated_nodes();
  // Train nodes: 40 of the isolated ones, all with ids in [100, 140), so that placing them
  // without looking at the train counts could pile them up.
  at::Tensor train = at::zeros({400}, at::kBool);
  train.slice(0, 100, 140).fill_(true);
  const at::Tensor parts = assign_metis(graph, 4, {.train_mask = train});
  ASSERT_EQ(parts.numel(), 400);
  EXPECT_GE(parts.min().item<int64_t>(), 0);
  EXPECT_LT(parts.max().item<int64_t>(), 4);
  EXPECT_LE(node_imbalance(parts, 4), 1.05);
  EXPECT_LE(imbalance(parts, 4, train.to(at::kDouble)), 1.05);
  // The rings were cut by METIS, not scattered: a ring of 30 in 4 parts cuts a few edges.
  EXPECT_LE(edge_cut(graph, parts), 8);
}

TEST(SkewedAssign, MetisOnAGraphWithoutEdgesBalancesEveryNode) {
  const graph::CscGraph graph = from_edges(103, {{5, 5}});
  const at::Tensor parts = assign_metis(graph, 4, {});
  const at::Tensor counts = at::bincount(parts, {}, 4);
  EXPECT_EQ(counts.min().item<int64_t>(), 25);
  EXPECT_EQ(counts.max().item<int64_t>(), 26);
}

// 8 hubs (ids 0..7, all linked to each other) with 150 more in-edges each from nodes 8..5007,
// then a chain over those nodes (one in-edge each): 1,256 of the 6,255 edges point at the
// first 8 ids, and each hub finds the earlier ones already placed.
constexpr int64_t kChain = 5000;
graph::CscGraph hubs_first() {
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t hub = 0; hub < 8; ++hub) {
    for (int64_t other = 0; other < 8; ++other) {
      if (other != hub) edges.emplace_back(other, hub);
    }
    for (int64_t j = 0; j < 150; ++j) edges.emplace_back(8 + (hub * 131 + j * 31) % kChain, hub);
  }
  for (int64_t v = 9; v < 8 + kChain; ++v) edges.emplace_back(v - 1, v);
  return from_edges(8 + kChain, edges);
}

TEST(SkewedAssign, StreamingBalancesEdgesWhenAsked) {
  const graph::CscGraph graph = hubs_first();
  for (const StreamAlgorithm algorithm : {StreamAlgorithm::kFennel, StreamAlgorithm::kLdg}) {
    SCOPED_TRACE(name_of(algorithm));
    // Nodes alone: the hubs' edges are not balanced (this is what the option is for).
    const at::Tensor nodes_only = assign_stream(graph, 4, {.algorithm = algorithm});
    EXPECT_LE(node_imbalance(nodes_only, 4), 1.06);
    EXPECT_GT(edge_imbalance(graph, nodes_only, 4), 1.2);
    const at::Tensor both =
        assign_stream(graph, 4, {.algorithm = algorithm, .balance_edges = true});
    // Fennel pays for the edges a node adds, so the hubs spread; LDG's penalty scales the
    // neighbor count and is blind to a node's weight, so it fills the parts in stream order
    // and only the capacities (and their overrun at the end) bound it.
    const double bound = algorithm == StreamAlgorithm::kFennel ? 1.1 : 1.2;
    EXPECT_LE(node_imbalance(both, 4), bound);
    EXPECT_LE(edge_imbalance(graph, both, 4), bound);
    // Still a partition that follows the chain: far fewer cut edges than random's ~3/4.
    EXPECT_LT(edge_cut(graph, both), graph.num_edges() / 2);
  }
}

TEST(SkewedAssign, StreamingBalancesTrainNodesWhenAsked) {
  const graph::CscGraph graph = hubs_first();
  // Train nodes at the end of the id range, where the streaming order sees them last.
  at::Tensor train = at::zeros({8 + kChain}, at::kBool);
  train.slice(0, kChain - 500).fill_(true);
  const at::Tensor parts = assign_stream(graph, 4, {.train_mask = train, .balance_edges = true});
  EXPECT_LE(imbalance(parts, 4, train.to(at::kDouble)), 1.1);
  EXPECT_LE(node_imbalance(parts, 4), 1.1);
  EXPECT_LE(edge_imbalance(graph, parts, 4), 1.1);
}

}  // namespace
}  // namespace graphloom::partition
