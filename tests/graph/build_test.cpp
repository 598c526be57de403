// COO -> CSC: literal expectations on a hand-written graph, stability, ids, weights, errors,
// and independence from the thread count.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <omp.h>

#include "graph_fixtures.h"
#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/degree_stats.h"

namespace graphloom::graph {
namespace {

using testing::small_coo;
using testing::to_vector;
using V = std::vector<int64_t>;

TEST(CscFromCoo, GroupsByDestinationKeepingInputOrder) {
  const CscGraph graph = csc_from_coo(small_coo());
  EXPECT_EQ(graph.num_nodes, 4);
  EXPECT_EQ(to_vector(graph.indptr), V({0, 1, 5, 7, 7}));
  EXPECT_EQ(to_vector(graph.indices), V({1, 0, 2, 2, 1, 3, 0}));
  EXPECT_EQ(to_vector(graph.edge_ids), V({2, 0, 1, 5, 6, 3, 4}));
  EXPECT_EQ(graph.indices.scalar_type(), at::kInt);  // < 2^31 nodes
  EXPECT_NO_THROW(graph.validate());
}

TEST(CscFromCoo, CarriesWeightsAndGivenIds) {
  CooInput input = small_coo();
  input.weights = at::tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  input.edge_ids = at::tensor({10, 11, 12, 13, 14, 15, 16}, at::kLong);
  const CscGraph graph = csc_from_coo(input);
  EXPECT_EQ(to_vector(graph.edge_ids), V({12, 10, 11, 15, 16, 13, 14}));
  EXPECT_TRUE(at::equal(graph.weights, at::tensor({2.f, 0.f, 1.f, 5.f, 6.f, 3.f, 4.f})));
}

TEST(CscFromCoo, DropsEdgeIdsOnRequest) {
  CooInput input = small_coo();
  input.keep_edge_ids = false;
  input.weights = at::tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  const CscGraph graph = csc_from_coo(input);
  EXPECT_FALSE(graph.has_edge_ids());
  EXPECT_TRUE(at::equal(graph.weights, at::tensor({2.f, 0.f, 1.f, 5.f, 6.f, 3.f, 4.f})));
}

TEST(CscFromCoo, ReadsStridedColumnsOfAnEdgeArray) {
  const at::Tensor edges = at::stack({small_coo().src, small_coo().dst}, 1).to(at::kInt);
  CooInput input{.src = edges.select(1, 0), .dst = edges.select(1, 1), .num_nodes = 4};
  EXPECT_EQ(to_vector(csc_from_coo(input).indices), V({1, 0, 2, 2, 1, 3, 0}));
}

TEST(CscFromCoo, NamesTheEdgeWithAnOutOfRangeEndpoint) {
  CooInput input = small_coo();
  input.dst = at::tensor({1, 1, 0, 4, 2, 1, 1}, at::kLong);
  try {
    csc_from_coo(input);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "edge 3 (3 -> 4) has an endpoint outside [0, 4)");
  }
  input.dst = at::tensor({1, 1, 0, 2, 2, 1, 1}, at::kLong);
  input.src = at::tensor({0, 2, 1, 3, -1, 2, 1}, at::kLong);
  EXPECT_THROW(csc_from_coo(input), Error);
}

TEST(CscFromCoo, RejectsMismatchedInputs) {
  CooInput input = small_coo();
  input.weights = at::ones({3});
  EXPECT_THROW(csc_from_coo(input), Error);
  input = small_coo();
  input.dst = input.dst.slice(0, 0, 5);
  EXPECT_THROW(csc_from_coo(input), Error);
}

TEST(CscFromCoo, SameResultForAnyThreadCount) {
  const int64_t n = 5000;
  const at::Tensor src = at::randint(n, {200000}, at::kLong);
  const at::Tensor dst = at::randint(n, {200000}, at::kLong);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const CscGraph one = csc_from_coo({.src = src, .dst = dst, .num_nodes = n});
  omp_set_num_threads(4);
  const CscGraph four = csc_from_coo({.src = src, .dst = dst, .num_nodes = n});
  omp_set_num_threads(saved);
  EXPECT_TRUE(at::equal(one.indptr, four.indptr));
  EXPECT_TRUE(at::equal(one.indices, four.indices));
  EXPECT_TRUE(at::equal(one.edge_ids, four.edge_ids));
  // Every CSC entry maps back to its input edge.
  EXPECT_TRUE(at::equal(one.indices.to(at::kLong), src.index_select(0, one.edge_ids)));
  EXPECT_TRUE(at::equal(one.destinations(), dst.index_select(0, one.edge_ids)));
}

TEST(CscGraph, DegreesAndStats) {
  const CscGraph graph = csc_from_coo(small_coo());
  EXPECT_EQ(to_vector(graph.in_degrees()), V({1, 4, 2, 0}));
  EXPECT_EQ(to_vector(graph.out_degrees()), V({2, 2, 2, 1}));
  const DegreeStats stats = degree_stats(graph.in_degrees());
  EXPECT_EQ(stats.min, 0);
  EXPECT_EQ(stats.max, 4);
  EXPECT_DOUBLE_EQ(stats.mean, 7.0 / 4);
  EXPECT_EQ(stats.num_zero, 1);
}

TEST(CscGraph, ValidateCatchesCorruptArrays) {
  CscGraph graph = csc_from_coo(small_coo());
  graph.indices = graph.indices.clone();
  graph.indices[2] = 9;
  EXPECT_THROW(graph.validate(), Error);
  graph = csc_from_coo(small_coo());
  graph.indptr = graph.indptr.clone();
  graph.indptr[2] = 0;
  EXPECT_THROW(graph.validate(), Error);
}

TEST(IndexDtype, NarrowestThatFits) {
  EXPECT_EQ(index_dtype_for(100), at::kInt);
  EXPECT_EQ(index_dtype_for(int64_t{1} << 31), at::kLong);
}

}  // namespace
}  // namespace graphloom::graph
