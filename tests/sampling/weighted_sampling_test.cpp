// Weighted sampling through the alias tables: the law of the picks (chi-square against the
// successive-sampling closed form), both without-replacement algorithms and the exact fallback,
// hubs of mostly zero weights, and per-edge-type segments.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "graphloom/graph/build.h"
#include "graphloom/graph/weight_alias.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

using testing::chi_square;
using testing::star_graph;

// Probability that successive sampling (each pick by weight among the edges not picked yet)
// ends with the set `subset`: the sum over its orders.
double successive_probability(const std::vector<double>& weight, std::vector<int> subset) {
  std::sort(subset.begin(), subset.end());
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  double p = 0;
  do {
    double order = 1, remaining = total;
    for (const int j : subset) {
      order *= weight[j] / remaining;
      remaining -= weight[j];
    }
    p += order;
  } while (std::next_permutation(subset.begin(), subset.end()));
  return p;
}

// Counts of each set of `fanout` star neighbors picked over `trials` calls, against the closed
// form; returns the chi-square statistic (df = number of sets - 1).
double subset_chi_square(const std::vector<float>& weights, int64_t fanout, int64_t trials) {
  const auto degree = static_cast<int64_t>(weights.size());
  const LocalNeighborSource source(star_graph(degree, at::tensor(weights)));
  std::map<std::vector<int>, int64_t> counts;
  for (int64_t trial = 0; trial < trials; ++trial) {
    const SampledEdges picks =
        source.sample_neighbors(at::zeros({1}, at::kLong), fanout,
                                {.weighted = true, .random_key = static_cast<uint64_t>(trial)});
    EXPECT_EQ(picks.neighbors.numel(), fanout);
    std::vector<int> subset;
    for (int64_t j = 0; j < picks.neighbors.numel(); ++j)
      subset.push_back(static_cast<int>(picks.neighbors[j].item<int64_t>() - 1));
    std::sort(subset.begin(), subset.end());
    EXPECT_EQ(std::set<int>(subset.begin(), subset.end()).size(), subset.size()) << "repeat";
    ++counts[subset];
  }
  // Every set of `fanout` positions, in lexicographic order, by a selection mask.
  const std::vector<double> w(weights.begin(), weights.end());
  std::vector<int64_t> observed;
  std::vector<double> expected;
  std::vector<bool> mask(degree, false);
  std::fill(mask.begin(), mask.begin() + fanout, true);
  do {
    std::vector<int> subset;
    for (int j = 0; j < degree; ++j) {
      if (mask[j]) subset.push_back(j);
    }
    observed.push_back(counts[subset]);
    expected.push_back(successive_probability(w, subset));
  } while (std::prev_permutation(mask.begin(), mask.end()));
  return chi_square(observed, expected);
}

TEST(WeightedSampling, PairsFollowSuccessiveSampling) {
  // Six pairs, df 5: the p = 0.001 critical value is 20.52.
  EXPECT_LT(subset_chi_square({1, 2, 3, 4}, 2, 20000), 20.52);
}

TEST(WeightedSampling, HeavyEdgesTakeTheExactFallbackAndKeepTheLaw) {
  // Two edges hold 95% of the weight: the third pick's redraws mostly repeat them, and the
  // pick is drawn from the unpicked weight directly. Ten triples, df 9: critical 27.88.
  EXPECT_LT(subset_chi_square({50, 50, 1, 2, 3}, 3, 20000), 27.88);
}

TEST(WeightedSampling, LargeFanoutsUseKeysAndSkipZeroWeights) {
  // 150 edges of weight 1 and 50 of weight 0 (every fourth): fanout 100 takes the
  // Efraimidis-Spirakis path; its picks are distinct, positive and uniform among them.
  std::vector<float> weights(200, 1.f);
  for (std::size_t j = 0; j < weights.size(); j += 4) weights[j] = 0.f;
  const LocalNeighborSource source(star_graph(200, at::tensor(weights)));
  std::vector<int64_t> counts(150, 0);
  std::vector<int64_t> slot(200, -1);
  for (int64_t j = 0, s = 0; j < 200; ++j) {
    if (weights[j] > 0) slot[j] = s++;
  }
  for (uint64_t trial = 0; trial < 300; ++trial) {
    const SampledEdges picks = source.sample_neighbors(at::zeros({1}, at::kLong), 100,
                                                       {.weighted = true, .random_key = trial});
    ASSERT_EQ(std::get<0>(at::_unique(picks.neighbors)).numel(), 100);
    for (int64_t j = 0; j < 100; ++j) {
      const int64_t s = slot[picks.neighbors[j].item<int64_t>() - 1];
      ASSERT_GE(s, 0) << "picked an edge of weight 0";
      ++counts[s];
    }
  }
  EXPECT_LT(chi_square(counts, std::vector<double>(150, 1.0 / 150)), 215.0);  // df 149, p~3e-4
}

TEST(WeightedSampling, AHubOfMostlyZeroWeightsGivesItsPositiveEdges) {
  // 50,000 in-edges, five of them positive: fanout 10 takes exactly those five (with
  // replacement, ten picks among them), fanout 3 three distinct ones.
  constexpr int64_t kDegree = 50000;
  at::Tensor weights = at::zeros({kDegree});
  const std::set<int64_t> positive{7, 1234, 20000, 33333, 49999};
  for (const int64_t j : positive) weights[j] = 1.0 + static_cast<double>(j % 5);
  const LocalNeighborSource source(star_graph(kDegree, weights));
  const at::Tensor seed = at::zeros({1}, at::kLong);
  const auto positions = [](const SampledEdges& picks) {
    std::multiset<int64_t> out;
    for (int64_t j = 0; j < picks.neighbors.numel(); ++j)
      out.insert(picks.neighbors[j].item<int64_t>() - 1);
    return out;
  };
  for (uint64_t trial = 0; trial < 50; ++trial) {
    const auto all =
        positions(source.sample_neighbors(seed, 10, {.weighted = true, .random_key = trial}));
    EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()), positive);
    EXPECT_EQ(all.size(), positive.size());
    const auto three =
        positions(source.sample_neighbors(seed, 3, {.weighted = true, .random_key = trial}));
    EXPECT_EQ(std::set<int64_t>(three.begin(), three.end()).size(), 3u);
    const auto replaced = positions(source.sample_neighbors(
        seed, 10, {.replace = true, .weighted = true, .random_key = trial}));
    EXPECT_EQ(replaced.size(), 10u);
    for (const int64_t j : replaced) EXPECT_TRUE(positive.count(j)) << j;
  }
}

TEST(WeightedSampling, EachEdgeTypeDrawsByItsOwnWeights) {
  // Node 0's in-edges from 1..6 alternate types 1, 0, 1, 0, ...; the type sort makes two
  // segments in its column, and each must draw only by its own weights.
  graph::CooInput input;
  input.src = at::arange(1, 7, at::kLong);
  input.dst = at::zeros({6}, at::kLong);
  input.num_nodes = 7;
  input.edge_types = at::tensor({1, 0, 1, 0, 1, 0}, at::kShort);
  input.weights = at::tensor({10.f, 1.f, 20.f, 2.f, 30.f, 3.f});
  const LocalNeighborSource source(graph::csc_from_coo(input));
  for (const int64_t type : {0, 1}) {
    SCOPED_TRACE(type);
    SampleOptions options{.weighted = true};
    options.edge_type_fanouts = type == 0 ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1};
    std::map<int64_t, int64_t> counts;
    for (uint64_t trial = 0; trial < 6000; ++trial) {
      options.random_key = trial;
      const SampledEdges picks = source.sample_neighbors(at::zeros({1}, at::kLong), 1, options);
      ASSERT_EQ(picks.neighbors.numel(), 1);
      ASSERT_EQ(picks.edge_types[0].item<int64_t>(), type);
      ++counts[picks.neighbors[0].item<int64_t>()];
    }
    // Type 0 is sources 2, 4, 6 (weights 1, 2, 3); type 1 is 1, 3, 5 (10, 20, 30).
    const int64_t first = type == 0 ? 2 : 1;
    const std::vector<int64_t> observed{counts[first], counts[first + 2], counts[first + 4]};
    EXPECT_EQ(observed[0] + observed[1] + observed[2], 6000);
    EXPECT_LT(chi_square(observed, {1.0 / 6, 2.0 / 6, 3.0 / 6}), 13.82);  // df 2
  }
}

TEST(WeightedSampling, KnowingEveryWeightIsPositiveChangesNoPick) {
  // weight_alias_all_positive lets the kernel count a column's picks from its degree and skip
  // its table: the same picks as reading the table, in every mode, plain and typed.
  for (const bool typed : {false, true}) {
    SCOPED_TRACE(typed);
    graph::CooInput input;
    const at::Tensor src = at::randint(0, 300, {6000}, at::kLong);
    input.src = src;
    input.dst = at::where(at::arange(6000) < 2000, 0, at::randint(0, 300, {6000}, at::kLong));
    input.num_nodes = 300;
    input.weights = at::rand({6000}) + 0.01;
    if (typed) input.edge_types = at::remainder(src, 3).to(at::kShort);
    graph::CscGraph known = graph::with_weight_alias(graph::csc_from_coo(input));
    ASSERT_TRUE(known.weight_alias_all_positive);
    graph::CscGraph unknown = known;
    unknown.weight_alias_all_positive = false;
    const LocalNeighborSource fast(known), slow(unknown);
    const at::Tensor seeds = at::arange(300, at::kLong);
    for (const bool replace : {false, true}) {
      for (const int64_t fanout : {-1, 1, 10, 80}) {
        const SampleOptions options{.replace = replace, .weighted = true, .random_key = 7};
        const SampledEdges a = fast.sample_neighbors(seeds, fanout, options);
        const SampledEdges b = slow.sample_neighbors(seeds, fanout, options);
        EXPECT_TRUE(at::equal(a.indptr, b.indptr)) << replace << " " << fanout;
        EXPECT_TRUE(at::equal(a.neighbors, b.neighbors)) << replace << " " << fanout;
        EXPECT_TRUE(at::equal(a.edge_ids, b.edge_ids)) << replace << " " << fanout;
      }
    }
  }
}

}  // namespace
}  // namespace graphloom::sampling
