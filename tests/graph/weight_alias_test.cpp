// Alias tables: the probability each table gives a position (keep plus what others hand it)
// equals its share of the segment's positive weight, tables stay within their edge-type
// segment, and bad weights are refused with their counts.
#include "graphloom/graph/weight_alias.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"

namespace graphloom::graph {
namespace {

// The probability that a pick in [begin, end) lands on each position: a uniform position,
// then keep it or take its alias.
std::vector<double> table_law(const at::Tensor& table, int64_t begin, int64_t end) {
  const int64_t degree = end - begin;
  std::vector<double> p(degree, 0.0);
  for (int64_t j = 0; j < degree; ++j) {
    const AliasEntry entry = unpack_alias_entry(table[begin + j].item<int64_t>());
    EXPECT_GE(entry.other, 0);
    EXPECT_LT(entry.other, degree) << "alias outside its segment";
    p[j] += entry.keep / static_cast<double>(degree);
    p[entry.other] += (1.0 - entry.keep) / static_cast<double>(degree);
  }
  return p;
}

TEST(WeightAlias, PackingRoundTrips) {
  for (const AliasEntry entry :
       {AliasEntry{0.25f, 7}, AliasEntry{1.f, 0}, AliasEntry{1e-30f, 2147483647}}) {
    const AliasEntry back = unpack_alias_entry(pack_alias_entry(entry));
    EXPECT_EQ(back.keep, entry.keep);
    EXPECT_EQ(back.other, entry.other);
  }
}

TEST(WeightAlias, EachColumnGivesItsWeightShares) {
  // Column 0: weights 1..4 and a 0; column 1: one edge; column 2: a skewed 200-edge column;
  // column 3: only zeros (never drawn, but its table must stay in bounds); column 4: a weight
  // too small for a float share beside a huge one.
  std::vector<int64_t> src, dst;
  std::vector<float> weights;
  const auto add = [&](int64_t d, float w) {
    src.push_back(static_cast<int64_t>(src.size()) % 5);
    dst.push_back(d);
    weights.push_back(w);
  };
  for (const float w : {1.f, 2.f, 0.f, 3.f, 4.f}) add(0, w);
  add(1, 5.f);
  for (int j = 0; j < 200; ++j) add(2, j % 10 == 0 ? 100.f : static_cast<float>(j % 7));
  for (int j = 0; j < 3; ++j) add(3, 0.f);
  add(4, 1e-38f);  // its share rounds to a float keep of 0, and must stay pickable
  add(4, 3e9f);
  CooInput input;
  input.src = at::tensor(src);
  input.dst = at::tensor(dst);
  input.weights = at::tensor(weights);
  input.num_nodes = 5;
  const CscGraph graph = with_weight_alias(csc_from_coo(input));
  ASSERT_TRUE(graph.weight_alias.defined());
  ASSERT_EQ(graph.weight_alias.numel(), graph.num_edges());
  EXPECT_FALSE(graph.weight_alias_all_positive);
  for (int64_t e = 0; e < graph.num_edges(); ++e) {
    EXPECT_EQ(unpack_alias_entry(graph.weight_alias[e].item<int64_t>()).keep > 0,
              graph.weights[e].item<float>() > 0)
        << "edge " << e << ": keep > 0 must mark exactly the positive weights";
  }
  for (const int64_t v : {0, 1, 2, 4}) {
    SCOPED_TRACE(v);
    const int64_t begin = graph.indptr[v].item<int64_t>(),
                  end = graph.indptr[v + 1].item<int64_t>();
    const at::Tensor w = graph.weights.slice(0, begin, end).to(at::kDouble);
    const double total = w.sum().item<double>();
    const std::vector<double> p = table_law(graph.weight_alias, begin, end);
    for (int64_t j = 0; j < end - begin; ++j) {
      EXPECT_NEAR(p[j], w[j].item<double>() / total, 1e-6) << "position " << j;
    }
  }
  table_law(graph.weight_alias, graph.indptr[3].item<int64_t>(), graph.indptr[4].item<int64_t>());
}

TEST(WeightAlias, TypedColumnsGetOneTablePerTypeSegment) {
  CooInput input;
  input.src = at::arange(1, 7, at::kLong);
  input.dst = at::zeros({6}, at::kLong);
  input.num_nodes = 7;
  input.edge_types = at::tensor({1, 0, 1, 0, 1, 0}, at::kShort);
  input.weights = at::tensor({10.f, 1.f, 20.f, 2.f, 30.f, 3.f});
  const CscGraph graph = with_weight_alias(csc_from_coo(input));
  // Sorted by type: positions 0..2 are type 0 (weights 1, 2, 3), 3..5 type 1 (10, 20, 30).
  const std::vector<double> low = table_law(graph.weight_alias, 0, 3);
  const std::vector<double> high = table_law(graph.weight_alias, 3, 6);
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(low[j], (j + 1) / 6.0, 1e-6);
    EXPECT_NEAR(high[j], (j + 1) / 6.0, 1e-6);
  }
}

TEST(WeightAlias, MarksTablesWhoseWeightsAreAllPositive) {
  CooInput input;
  input.src = at::tensor({1, 2, 0}, at::kLong);
  input.dst = at::tensor({0, 0, 1}, at::kLong);
  input.num_nodes = 3;
  for (const double odd : {0.5, 0.0, -1.0, std::nan("")}) {
    SCOPED_TRACE(odd);
    input.weights = at::tensor({2.0, odd, 1e-30});
    const CscGraph graph = with_weight_alias(csc_from_coo(input));
    EXPECT_EQ(graph.weight_alias_all_positive, odd > 0);
  }
  input.weights = at::Tensor();
  CscGraph unweighted = csc_from_coo(input);
  unweighted.weight_alias_all_positive = true;  // a stale mark goes with the table
  EXPECT_FALSE(with_weight_alias(unweighted).weight_alias_all_positive);
}

TEST(WeightAlias, UnweightedGraphsHaveNoTableAndBadWeightsAreRefused) {
  CooInput input;
  input.src = at::tensor({1, 2}, at::kLong);
  input.dst = at::tensor({0, 0}, at::kLong);
  input.num_nodes = 3;
  CscGraph graph = csc_from_coo(input);
  EXPECT_FALSE(with_weight_alias(graph).weight_alias.defined());
  graph.weights = at::ones({3});
  try {
    with_weight_alias(graph);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected 2 values (one per edge), got 3"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace graphloom::graph
