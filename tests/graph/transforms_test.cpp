// Graph transforms on the hand-written graph, with literal expectations.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graph_fixtures.h"
#include "graphloom/graph/transforms.h"

namespace graphloom::graph {
namespace {

using testing::small_coo;
using testing::to_vector;
using V = std::vector<int64_t>;

TEST(Transforms, ReverseIsTheCsrView) {
  const CscGraph graph = csc_from_coo(small_coo());
  const CscGraph reversed = reverse(graph);
  // Out-edges: 0 -> {1 (e0), 2 (e4)}, 1 -> {0 (e2), 1 (e6)}, 2 -> {1 (e1), 1 (e5)}, 3 -> {2 (e3)}
  EXPECT_EQ(to_vector(reversed.indptr), V({0, 2, 4, 6, 7}));
  EXPECT_EQ(to_vector(reversed.indices), V({1, 2, 0, 1, 1, 1, 2}));
  EXPECT_EQ(to_vector(reversed.edge_ids), V({0, 4, 2, 6, 1, 5, 3}));
  const CscGraph back = reverse(reversed);
  // Same columns; within a column the order follows the reversed graph's positions.
  EXPECT_TRUE(at::equal(back.indptr, graph.indptr));
  EXPECT_EQ(to_vector(back.edge_ids), V({2, 0, 6, 1, 5, 4, 3}));
}

TEST(Transforms, DedupeSortsAndKeepsFirst) {
  const CscGraph deduped = dedupe(csc_from_coo(small_coo()));
  EXPECT_EQ(to_vector(deduped.indptr), V({0, 1, 4, 6, 6}));
  EXPECT_EQ(to_vector(deduped.indices), V({1, 0, 1, 2, 0, 3}));
  EXPECT_EQ(to_vector(deduped.edge_ids), V({2, 0, 6, 1, 4, 3}));
}

TEST(Transforms, RemoveAndAddSelfLoops) {
  const CscGraph graph = csc_from_coo(small_coo());
  const CscGraph without = remove_self_loops(graph);
  EXPECT_EQ(to_vector(without.indptr), V({0, 1, 4, 6, 6}));
  EXPECT_EQ(to_vector(without.indices), V({1, 0, 2, 2, 3, 0}));
  EXPECT_EQ(to_vector(without.edge_ids), V({2, 0, 1, 5, 3, 4}));

  const CscGraph with = add_self_loops(without);
  EXPECT_EQ(to_vector(with.indptr), V({0, 2, 6, 9, 10}));
  EXPECT_EQ(to_vector(with.indices), V({1, 0, 0, 2, 2, 1, 3, 0, 2, 3}));
  EXPECT_EQ(to_vector(with.edge_ids), V({2, 6, 0, 1, 5, 7, 3, 4, 8, 9}));
}

TEST(Transforms, SelfLoopsGetTheGivenWeight) {
  CooInput input = small_coo();
  input.weights = at::full({7}, 0.5f);
  const CscGraph with = add_self_loops(csc_from_coo(input), /*self_loop_weight=*/2.0);
  EXPECT_EQ(with.weights.numel(), 11);
  EXPECT_FLOAT_EQ(with.weights.sum().item<float>(), 7 * 0.5f + 4 * 2.0f);
}

TEST(Transforms, ToBidirectedIsSymmetricWithoutDuplicates) {
  const CscGraph both = to_bidirected(csc_from_coo(small_coo()));
  // Undirected pairs: {0,1}, {1,2}, {2,3}, {0,2}, and the self-loop {1,1}.
  EXPECT_EQ(to_vector(both.indptr), V({0, 2, 5, 8, 9}));
  EXPECT_EQ(to_vector(both.indices), V({1, 2, 0, 1, 2, 0, 1, 3, 2}));
  EXPECT_FALSE(both.has_edge_ids());
  EXPECT_TRUE(at::equal(both.in_degrees(), both.out_degrees()));
}

}  // namespace
}  // namespace graphloom::graph
