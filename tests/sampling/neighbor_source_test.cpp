// One-hop sampling: distributions (chi-square), replacement rules, weights, directions and
// argument errors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <set>

#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

using testing::chi_square;
using testing::star_graph;

// Chi-square critical values at p = 0.001.
constexpr double kChi2Df19 = 43.82;
constexpr double kChi2Df3 = 16.27;

std::vector<int64_t> picks_of_center(const LocalNeighborSource& source, int64_t fanout,
                                     SampleOptions options, uint64_t key) {
  options.random_key = key;
  const SampledEdges picks = source.sample_neighbors(at::zeros({1}, at::kLong), fanout, options);
  const at::Tensor n = picks.neighbors;
  return {n.data_ptr<int64_t>(), n.data_ptr<int64_t>() + n.numel()};
}

TEST(SampleNeighbors, UniformWithoutReplacementIsUniformAndDistinct) {
  const LocalNeighborSource source(star_graph(20));
  std::vector<int64_t> counts(20, 0);
  for (uint64_t trial = 0; trial < 4000; ++trial) {
    const auto picks = picks_of_center(source, 5, {}, trial);
    ASSERT_EQ(picks.size(), 5u);
    EXPECT_EQ(std::set<int64_t>(picks.begin(), picks.end()).size(), 5u) << "repeated neighbor";
    for (int64_t v : picks) ++counts[v - 1];
  }
  EXPECT_LT(chi_square(counts, std::vector<double>(20, 1.0 / 20)), kChi2Df19);
}

TEST(SampleNeighbors, LargeFanoutUsesTheSecondAlgorithmAndStaysDistinct) {
  const LocalNeighborSource source(star_graph(300));
  std::vector<int64_t> counts(300, 0);
  for (uint64_t trial = 0; trial < 300; ++trial) {
    const auto picks = picks_of_center(source, 100, {}, trial);
    ASSERT_EQ(std::set<int64_t>(picks.begin(), picks.end()).size(), 100u);
    for (int64_t v : picks) ++counts[v - 1];
  }
  // Every neighbor is picked with probability 1/3: 100 times on average over 300 trials.
  EXPECT_LT(chi_square(counts, std::vector<double>(300, 1.0 / 300)), 400.0);  // df 299, p~1e-4
}

TEST(SampleNeighbors, UniformWithReplacementIsUniform) {
  const LocalNeighborSource source(star_graph(20));
  std::vector<int64_t> counts(20, 0);
  for (uint64_t trial = 0; trial < 2000; ++trial) {
    const auto picks = picks_of_center(source, 30, {.replace = true}, trial);
    ASSERT_EQ(picks.size(), 30u);  // exactly the fanout, even above the degree
    for (int64_t v : picks) ++counts[v - 1];
  }
  EXPECT_LT(chi_square(counts, std::vector<double>(20, 1.0 / 20)), kChi2Df19);
}

TEST(SampleNeighbors, FanoutAtOrAboveDegreeReturnsEveryNeighbor) {
  const LocalNeighborSource source(star_graph(7));
  for (int64_t fanout : {7, 8, 100, -1}) {
    auto picks = picks_of_center(source, fanout, {}, 3);
    std::sort(picks.begin(), picks.end());
    EXPECT_EQ(picks, std::vector<int64_t>({1, 2, 3, 4, 5, 6, 7})) << fanout;
  }
  // Nodes without in-edges get nothing, even with replacement.
  const SampledEdges none =
      source.sample_neighbors(at::tensor({3}, at::kLong), 5, {.replace = true});
  EXPECT_EQ(none.neighbors.numel(), 0);
}

// A skewed graph written out by hand: node 0 is a hub with 50,000 in-neighbors (ids 1..50000),
// node 1 has 3 (ids 2..4), node 2 none. One call samples all three, as a batch on R-MAT does.
TEST(SampleNeighbors, HubAndSparseSeedsInOneBatchKeepTheFanoutLaw) {
  constexpr int64_t kHubDegree = 50000;
  graph::CooInput input;
  input.src = at::cat({at::arange(1, kHubDegree + 1, at::kLong), at::tensor({2, 3, 4}, at::kLong)});
  input.dst = at::cat({at::zeros({kHubDegree}, at::kLong), at::ones({3}, at::kLong)});
  input.num_nodes = kHubDegree + 1;
  const LocalNeighborSource source(graph::csc_from_coo(input));
  const at::Tensor seeds = at::tensor({0, 1, 2}, at::kLong);
  for (const int64_t fanout : {10, 100}) {  // both without-replacement algorithms
    SCOPED_TRACE(fanout);
    constexpr int64_t kBuckets = 50;  // the hub's neighbors in runs of 1,000 ids
    std::vector<int64_t> counts(kBuckets, 0);
    const int64_t trials = 100000 / fanout;
    for (int64_t trial = 0; trial < trials; ++trial) {
      const SampledEdges picks = source.sample_neighbors(
          seeds, fanout, {.random_key = static_cast<uint64_t>(trial)});
      ASSERT_TRUE(at::equal(picks.indptr, at::tensor({0L, fanout, fanout + 3, fanout + 3})));
      const at::Tensor hub = picks.neighbors.slice(0, 0, fanout);
      ASSERT_EQ(std::get<0>(at::_unique(hub)).numel(), fanout) << "repeated neighbor";
      ASSERT_GE(hub.min().item<int64_t>(), 1);
      ASSERT_LE(hub.max().item<int64_t>(), kHubDegree);
      const at::Tensor sparse = std::get<0>(at::sort(picks.neighbors.slice(0, fanout)));
      ASSERT_TRUE(at::equal(sparse, at::tensor({2, 3, 4}, at::kLong)));
      const int64_t* v = hub.data_ptr<int64_t>();
      for (int64_t j = 0; j < fanout; ++j) ++counts[(v[j] - 1) / 1000];
    }
    EXPECT_LT(chi_square(counts, std::vector<double>(kBuckets, 1.0 / kBuckets)), 85.35);  // df 49
  }
}

TEST(SampleNeighbors, WeightedWithReplacementFollowsWeights) {
  const LocalNeighborSource source(star_graph(4, at::tensor({1.f, 2.f, 3.f, 4.f})));
  std::vector<int64_t> counts(4, 0);
  for (uint64_t trial = 0; trial < 2000; ++trial) {
    for (int64_t v : picks_of_center(source, 10, {.replace = true, .weighted = true}, trial)) {
      ++counts[v - 1];
    }
  }
  EXPECT_LT(chi_square(counts, {0.1, 0.2, 0.3, 0.4}), kChi2Df3);
}

TEST(SampleNeighbors, WeightedWithoutReplacementFollowsWeightsAndSkipsZeros) {
  const LocalNeighborSource source(star_graph(5, at::tensor({1.f, 2.f, 3.f, 4.f, 0.f})));
  std::vector<int64_t> first(4, 0);
  for (uint64_t trial = 0; trial < 10000; ++trial) {
    const auto one = picks_of_center(source, 1, {.weighted = true}, trial);
    ASSERT_EQ(one.size(), 1u);
    ASSERT_NE(one[0], 5) << "picked an edge of weight 0";
    ++first[one[0] - 1];
    const auto all = picks_of_center(source, 10, {.weighted = true}, trial);
    ASSERT_EQ(all.size(), 4u);  // only the positive-weight edges, each once
    ASSERT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 4u);
  }
  EXPECT_LT(chi_square(first, {0.1, 0.2, 0.3, 0.4}), kChi2Df3);
}

TEST(SampleNeighbors, OutEdgesReadTheReverseGraph) {
  const LocalNeighborSource source(star_graph(6));
  // Out-neighbors of node 4: only node 0.
  const SampledEdges picks =
      source.sample_neighbors(at::tensor({4, 0}, at::kLong), 3, {.direction = EdgeDirection::kOut});
  EXPECT_TRUE(at::equal(picks.indptr, at::tensor({0, 1, 1}, at::kLong)));
  EXPECT_TRUE(at::equal(picks.neighbors, at::tensor({0}, at::kLong)));
  EXPECT_TRUE(at::equal(picks.edge_ids, at::tensor({3}, at::kLong)));  // edge 3 is 4 -> 0
}

TEST(SampleNeighbors, WithoutEdgeIdsThePicksAreTheSameAndNoIdsCome) {
  const LocalNeighborSource source(star_graph(20));
  const at::Tensor seeds = at::tensor({0, 3, 0}, at::kLong);
  for (const bool replace : {false, true}) {
    const SampledEdges with = source.sample_neighbors(seeds, 4, {.replace = replace});
    const SampledEdges without =
        source.sample_neighbors(seeds, 4, {.replace = replace, .edge_ids = false});
    EXPECT_TRUE(at::equal(with.indptr, without.indptr));
    EXPECT_TRUE(at::equal(with.neighbors, without.neighbors));
    EXPECT_TRUE(with.edge_ids.defined());
    EXPECT_FALSE(without.edge_ids.defined());
  }
}

TEST(SampleNeighbors, BadArgumentsAreClearErrors) {
  const LocalNeighborSource source(star_graph(4));
  EXPECT_THROW(source.sample_neighbors(at::tensor({5}, at::kLong), 2, {}), Error);
  EXPECT_THROW(source.sample_neighbors(at::tensor({-1}, at::kLong), 2, {}), Error);
  EXPECT_THROW(source.sample_neighbors(at::tensor({0}, at::kInt), 2, {}), Error);
  EXPECT_THROW(source.sample_neighbors(at::tensor({0}, at::kLong), -2, {}), Error);
  try {
    source.sample_neighbors(at::tensor({0}, at::kLong), 2, {.weighted = true});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs edge weights"), std::string::npos);
  }
  graph::CscGraph bad = star_graph(4);
  bad.weights = at::ones({3});
  const LocalNeighborSource bad_source(bad);
  try {
    bad_source.sample_neighbors(at::tensor({0}, at::kLong), 2, {.weighted = true});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected 4 values (one per edge), got 3"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace graphloom::sampling
