// Link splits: held-out pairs never reach message passing (in either direction), negatives
// are non-edges, the counts follow the fractions; lp_* imports keep their fixed splits.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <set>

#include "graphloom/base/error.h"
#include "graphloom/graph/link_heuristics.h"
#include "graphloom/io/generators.h"
#include "graphloom/io/importers.h"
#include "graphloom/io/link_splits.h"
#include "support/test_support.h"

namespace graphloom::io {
namespace {

std::set<std::pair<int64_t, int64_t>> edge_set(const graph::CscGraph& graph) {
  std::set<std::pair<int64_t, int64_t>> edges;
  const at::Tensor src = graph.indices.to(at::kLong);
  const at::Tensor dst = graph.destinations();
  for (int64_t e = 0; e < src.numel(); ++e)
    edges.emplace(src[e].item<int64_t>(), dst[e].item<int64_t>());
  return edges;
}

void expect_held_out_edges_are_not_in(const Dataset& split) {
  const auto edges = edge_set(split.graph);
  for (const char* name : {"valid", "test", "valid_neg", "test_neg"}) {
    const at::Tensor pairs = split.edge_splits.at(name);
    for (int64_t i = 0; i < pairs.size(0); ++i) {
      const int64_t u = pairs[i][0].item<int64_t>();
      const int64_t v = pairs[i][1].item<int64_t>();
      EXPECT_FALSE(edges.count({u, v}) || edges.count({v, u})) << name << " " << u << "," << v;
    }
  }
}

TEST(LinkSplits, HeldOutPairsAndTheirReversesLeaveTheGraph) {
  Dataset data = generate_planted({.num_nodes = 500, .avg_degree = 6, .seed = 2});
  data.directed = false;
  const auto original = edge_set(data.graph);
  const Dataset split = make_link_splits(data, {.valid_fraction = 0.1, .test_fraction = 0.2});
  const int64_t pairs = static_cast<int64_t>(original.size()) / 2;  // symmetric, no loops
  EXPECT_EQ(split.edge_splits.at("valid").size(0), pairs / 10);
  EXPECT_EQ(split.edge_splits.at("test").size(0), pairs / 5);
  EXPECT_EQ(split.edge_splits.at("valid_neg").size(0), split.edge_splits.at("valid").size(0));
  EXPECT_EQ(split.edge_splits.at("test_neg").size(0), split.edge_splits.at("test").size(0));
  EXPECT_EQ(split.edge_splits.at("train").size(0) + pairs / 10 + pairs / 5, pairs);
  // Every positive was an edge, every negative was not, and none of the held-out ones remain.
  for (const char* name : {"train", "valid", "test"}) {
    const at::Tensor p = split.edge_splits.at(name);
    for (int64_t i = 0; i < p.size(0); ++i)
      EXPECT_TRUE(original.count({p[i][0].item<int64_t>(), p[i][1].item<int64_t>()}));
  }
  for (const char* name : {"valid_neg", "test_neg"}) {
    const at::Tensor p = split.edge_splits.at(name);
    for (int64_t i = 0; i < p.size(0); ++i) {
      const int64_t u = p[i][0].item<int64_t>();
      const int64_t v = p[i][1].item<int64_t>();
      EXPECT_FALSE(original.count({u, v}) || original.count({v, u}) || u == v);
    }
  }
  expect_held_out_edges_are_not_in(split);
  EXPECT_EQ(static_cast<int64_t>(edge_set(split.graph).size()),
            2 * split.edge_splits.at("train").size(0));
  EXPECT_THROW(make_link_splits(data, {.valid_fraction = 0.6, .test_fraction = 0.5}), Error);
}

TEST(LinkSplits, CommonNeighborsCountSharedInNeighbors) {
  // Undirected path 0-1-2 plus 0-3-2 and 1-3: N(0) = {1, 3}, N(2) = {1, 3}, N(1) = {0, 2, 3}.
  const at::Tensor pairs = at::tensor({0, 1, 1, 2, 0, 3, 3, 2, 1, 3}, at::kLong).view({5, 2});
  const graph::CscGraph graph = graph_of_pairs(pairs, 4, /*both_directions=*/true);
  const at::Tensor queries = at::tensor({0, 2, 0, 1, 1, 3}, at::kLong).view({3, 2});
  EXPECT_TRUE(
      at::equal(graph::common_neighbor_counts(graph, queries), at::tensor({2.f, 1.f, 2.f})));
}

TEST(LinkSplits, LpImportKeepsOnlyTrainingPositivesForMessagePassing) {
  GL_REQUIRE_SHARED_DATASET(dir, "lp_usair");
  const Dataset data = import_shared_dataset(dir);
  EXPECT_EQ(data.edge_splits.at("train").size(0), 1807);
  EXPECT_EQ(data.edge_splits.at("valid").size(0), 106);
  EXPECT_EQ(data.edge_splits.at("test").size(0), 213);
  EXPECT_EQ(data.graph.num_edges(), 2 * 1807);
  expect_held_out_edges_are_not_in(data);
}

}  // namespace
}  // namespace graphloom::io
