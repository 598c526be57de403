// LABOR-0: shared per-node variates (seeds with the same neighbors keep the same ones), the
// expected number of picks, dependencies across layers and batches, partitions, typed graphs
// and the requests it refuses.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"
#include "graphloom/sampling/labor.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

// Nodes 0..sharers-1 each have in-edges from the same `degree` nodes (ids sharers..).
graph::CscGraph shared_neighbors_graph(int64_t sharers, int64_t degree) {
  graph::CooInput input;
  input.src = at::arange(sharers, sharers + degree, at::kLong).repeat({sharers});
  input.dst = at::arange(sharers, at::kLong).repeat_interleave(degree);
  input.num_nodes = sharers + degree;
  input.keep_edge_ids = false;
  return graph::csc_from_coo(input);
}

std::set<int64_t> picks_of(const SampledEdges& edges, int64_t seed_position) {
  const int64_t begin = edges.indptr[seed_position].item<int64_t>();
  const int64_t end = edges.indptr[seed_position + 1].item<int64_t>();
  std::set<int64_t> out;
  for (int64_t e = begin; e < end; ++e) out.insert(edges.neighbors[e].item<int64_t>());
  return out;
}

SampleOptions labor_call(uint64_t batch, uint64_t layer = 0, LaborOptions labor = {}) {
  return {.labor = labor_variates(/*seed=*/3, /*epoch=*/0, batch, layer, labor)};
}

TEST(Labor, SeedsWithTheSameNeighborsKeepTheSameOnes) {
  const LocalNeighborSource source(shared_neighbors_graph(8, 100));
  const at::Tensor seeds = at::arange(8, at::kLong);
  const SampledEdges labor = source.sample_neighbors(seeds, 10, labor_call(0));
  const SampledEdges neighbor = source.sample_neighbors(seeds, 10, {.random_key = 5});
  std::set<int64_t> labor_union, neighbor_union;
  for (int64_t s = 0; s < 8; ++s) {
    EXPECT_EQ(picks_of(labor, s), picks_of(labor, 0)) << "seed " << s;
    for (int64_t v : picks_of(labor, s)) labor_union.insert(v);
    for (int64_t v : picks_of(neighbor, s)) neighbor_union.insert(v);
  }
  // The neighbor sampler's 8 independent picks of 10 out of 100 reach ~57 distinct nodes.
  EXPECT_EQ(labor_union.size(), picks_of(labor, 0).size());
  EXPECT_GT(neighbor_union.size(), 2 * labor_union.size());
}

TEST(Labor, EachSeedKeepsFanoutNeighborsOnAverageAndEveryNeighborAlike) {
  // 400 separate stars of degree 50 (distinct neighbors, so the variates are independent).
  const int64_t stars = 400, degree = 50, fanout = 10;
  graph::CooInput input;
  input.src = at::arange(stars, stars + stars * degree, at::kLong);
  input.dst = at::arange(stars, at::kLong).repeat_interleave(degree);
  input.num_nodes = stars + stars * degree;
  input.keep_edge_ids = false;
  const LocalNeighborSource source(graph::csc_from_coo(input));
  std::vector<int64_t> kept_per_position(degree, 0);
  double total = 0;
  const int64_t calls = 20;
  for (uint64_t batch = 0; batch < calls; ++batch) {
    const SampledEdges edges =
        source.sample_neighbors(at::arange(stars, at::kLong), fanout, labor_call(batch));
    total += static_cast<double>(edges.neighbors.numel());
    const at::Tensor position = (edges.neighbors - stars) % degree;
    for (int64_t i = 0; i < position.numel(); ++i) ++kept_per_position[position[i].item<int64_t>()];
  }
  // Picks per seed ~ Binomial(50, 0.2): mean 10, sd 2.83; over 8000 seed calls the mean's sd is
  // 0.032.
  EXPECT_NEAR(total / (stars * calls), 10.0, 0.15);
  EXPECT_LT(testing::chi_square(kept_per_position, std::vector<double>(degree, 1.0 / degree)),
            85.35);  // chi-square, 49 degrees of freedom, p = 0.001
}

TEST(Labor, NodesUpToTheFanoutKeepEveryNeighbor) {
  const LocalNeighborSource source(testing::star_graph(7));
  const SampledEdges edges = source.sample_neighbors(at::zeros({1}, at::kLong), 7, labor_call(0));
  EXPECT_EQ(edges.neighbors.numel(), 7);
  EXPECT_EQ(source.sample_neighbors(at::zeros({1}, at::kLong), -1, labor_call(0)).neighbors.numel(),
            7);
}

TEST(Labor, LayerDependencySharesTheVariatesOfEveryLayer) {
  const LaborOptions independent{}, dependent{.layer_dependency = true};
  EXPECT_NE(labor_variates(3, 0, 5, 0, independent).key,
            labor_variates(3, 0, 5, 1, independent).key);
  EXPECT_EQ(labor_variates(3, 0, 5, 0, dependent).key, labor_variates(3, 0, 5, 1, dependent).key);
  // And the sampler uses them: with one shared neighbor set, both layers keep the same nodes.
  const LocalNeighborSource source(shared_neighbors_graph(4, 200));
  const at::Tensor seeds = at::arange(4, at::kLong);
  EXPECT_EQ(picks_of(source.sample_neighbors(seeds, 20, labor_call(0, 0, dependent)), 0),
            picks_of(source.sample_neighbors(seeds, 20, labor_call(0, 1, dependent)), 0));
  EXPECT_NE(picks_of(source.sample_neighbors(seeds, 20, labor_call(0, 0, independent)), 0),
            picks_of(source.sample_neighbors(seeds, 20, labor_call(0, 1, independent)), 0));
}

// Pearson correlation of the variates of nodes 0..n-1 under two calls.
double variate_correlation(const LaborVariates& a, const LaborVariates& b, int64_t n) {
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  for (int64_t v = 0; v < n; ++v) {
    const double x = labor_variate(a, v), y = labor_variate(b, v);
    sa += x, sb += y, saa += x * x, sbb += y * y, sab += x * y;
  }
  const double cov = sab / n - sa / n * sb / n;
  return cov / std::sqrt((saa / n - sa / n * sa / n) * (sbb / n - sb / n * sb / n));
}

TEST(Labor, BatchDependencyMovesTheVariatesSlowlyAndKeepsThemUniform) {
  const LaborOptions slow{.batch_dependency = 32};
  const int64_t n = 20000;
  const auto at_batch = [&](uint64_t batch, LaborOptions o) {
    return labor_variates(3, 0, batch, 0, o);
  };
  EXPECT_GT(variate_correlation(at_batch(40, slow), at_batch(41, slow), n), 0.95);
  // Across a window's end as well: batch 63 is nearly the next window's start, batch 64.
  EXPECT_GT(variate_correlation(at_batch(63, slow), at_batch(64, slow), n), 0.95);
  EXPECT_LT(std::abs(variate_correlation(at_batch(40, {}), at_batch(41, {}), n)), 0.05);
  // Each batch's variates stay uniform: ten equal bins.
  std::vector<int64_t> bins(10, 0);
  const LaborVariates middle = at_batch(48, slow);
  for (int64_t v = 0; v < n; ++v) ++bins[static_cast<std::size_t>(labor_variate(middle, v) * 10)];
  EXPECT_LT(testing::chi_square(bins, std::vector<double>(10, 0.1)), 27.88);  // 9 df, p = 0.001
}

TEST(Labor, APartitionKeepsWhatTheWholeGraphKeeps) {
  const graph::CscGraph whole = testing::random_graph(300, 9000, 4);
  const LocalNeighborSource whole_source(whole);
  // The columns of nodes 100..199 alone, as a partition holds them (sources stay global ids).
  graph::CscGraph part = whole;
  const int64_t begin = whole.indptr[100].item<int64_t>();
  const int64_t end = whole.indptr[200].item<int64_t>();
  part.indptr = whole.indptr.slice(0, 100, 201) - begin;
  part.indices = whole.indices.slice(0, begin, end);
  part.num_nodes = 100;
  part.edge_ids = at::arange(begin, end, at::kLong);
  const LocalNeighborSource part_source(part);
  SampleOptions in_part = labor_call(2);
  in_part.first_node = 100;
  const at::Tensor seeds = at::arange(120, 180, at::kLong);
  const SampledEdges a = whole_source.sample_neighbors(seeds, 6, labor_call(2));
  const SampledEdges b = part_source.sample_neighbors(seeds, 6, in_part);
  EXPECT_TRUE(at::equal(a.indptr, b.indptr));
  EXPECT_TRUE(at::equal(a.neighbors, b.neighbors));
}

TEST(Labor, SamplerBatchesAreReproducibleAndSmallerThanNeighborSampling) {
  const graph::CscGraph graph = testing::random_graph(3000, 90000, 5);
  const LocalNeighborSource source(graph);
  const NeighborSampler labor(&source,
                              {.fanouts = {5, 5}, .seed = 1, .method = SamplingMethod::kLabor});
  const NeighborSampler neighbor(&source, {.fanouts = {5, 5}, .seed = 1});
  const at::Tensor seeds = at::arange(0, 3000, 10, at::kLong);
  const MiniBatch first = labor.sample(seeds, 0, 4);
  const MiniBatch again = labor.sample(seeds, 0, 4);
  for (std::size_t l = 0; l < first.blocks.size(); ++l) {
    EXPECT_TRUE(at::equal(first.blocks[l].src_ids, again.blocks[l].src_ids));
    EXPECT_TRUE(at::equal(first.blocks[l].indices, again.blocks[l].indices));
  }
  EXPECT_LT(first.input_nodes().numel(), neighbor.sample(seeds, 0, 4).input_nodes().numel());
  EXPECT_FALSE(at::equal(first.input_nodes(), labor.sample(seeds, 0, 5).input_nodes()));
}

TEST(Labor, TypedGraphsGiveEachEdgeTypeItsFanout) {
  graph::CooInput input;
  const int64_t degree = 400;
  input.src = at::arange(1, degree + 1, at::kLong);
  input.dst = at::zeros({degree}, at::kLong);
  input.edge_types = (at::arange(degree, at::kLong) % 2).to(at::kChar);
  input.num_nodes = degree + 1;
  const LocalNeighborSource source(graph::csc_from_coo(input));
  SampleOptions options = labor_call(0);
  options.edge_type_fanouts = {0, 40};
  double picks = 0;
  for (uint64_t batch = 0; batch < 30; ++batch) {
    options.labor = labor_variates(3, 0, batch, 0, {});
    const SampledEdges edges = source.sample_neighbors(at::zeros({1}, at::kLong), 7, options);
    EXPECT_TRUE(at::all(edges.edge_types == 1).item<bool>());
    picks += static_cast<double>(edges.neighbors.numel());
  }
  EXPECT_NEAR(picks / 30, 40.0, 4.0);  // Binomial(200, 0.2) has sd 5.7; the mean's is 1.03
}

TEST(Labor, TheIntegerCutKeepsWhatTheTestInDoublesKeeps) {
  const auto passes = [](uint64_t k, int64_t fanout, int64_t degree) {
    return static_cast<double>(k) * 0x1.0p-53 * static_cast<double>(degree) <
           static_cast<double>(fanout);
  };
  for (const auto& [fanout, degree] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 1},
                                                {1, 2},
                                                {10, 11},
                                                {10, 3},
                                                {5, 7},
                                                {3, 1000003},
                                                {10, 1 << 20},
                                                {25, 2147483647},
                                                {2147483646, 2147483647},
                                                {7, 7}}) {
    SCOPED_TRACE(fmt::format("fanout {} degree {}", fanout, degree));
    const uint64_t bound = labor_keep_bound(fanout, degree);
    ASSERT_LE(bound, uint64_t{1} << 53);
    if (bound > 0) {
      EXPECT_TRUE(passes(bound - 1, fanout, degree));
    }
    if (bound < (uint64_t{1} << 53)) {
      EXPECT_FALSE(passes(bound, fanout, degree));
    }
  }
  // Per node, with and without batch dependency (whose blend keeps the test in doubles).
  for (const int64_t dependency : {1, 4}) {
    const LaborVariates variates = labor_variates(3, 0, 2, 1, {.batch_dependency = dependency});
    const LaborCut cut(variates, 10, 37);
    std::vector<int64_t> nodes;
    int64_t kept = 0;
    for (int64_t node = 0; node < 20000; ++node) {
      ASSERT_EQ(cut.keeps(node), labor_variate(variates, node) * 37.0 < 10.0) << node;
      nodes.push_back(node * 7919 % 20011);  // unordered, as a column's sources are
      kept += cut.keeps(nodes.back());
    }
    // The marking pass (vectorized on AVX-512 hosts), over every length's tail too.
    const std::vector<int32_t> narrow(nodes.begin(), nodes.end());
    for (const int64_t n : {0, 1, 7, 8, 9, 15, 17, 20000}) {
      std::vector<uint8_t> wide_marks(n + 1, 2), narrow_marks(n + 1, 2);
      mark_kept(cut, nodes.data(), n, wide_marks.data());
      mark_kept(cut, narrow.data(), n, narrow_marks.data());
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_EQ(wide_marks[j], cut.keeps(nodes[j]) ? 1 : 0) << n << " " << j;
        ASSERT_EQ(narrow_marks[j], wide_marks[j]) << n << " " << j;
      }
      EXPECT_EQ(wide_marks[n], 2) << "wrote past " << n;
      EXPECT_EQ(narrow_marks[n], 2) << "wrote past " << n;
    }
    EXPECT_GT(kept, 0);
  }
}

TEST(Labor, RefusesReplacementWeightsAndBadDependencies) {
  const LocalNeighborSource source(testing::star_graph(20, at::ones({20})));
  SampleOptions replace = labor_call(0);
  replace.replace = true;
  EXPECT_THROW(source.sample_neighbors(at::zeros({1}, at::kLong), 5, replace), OptionError);
  SampleOptions weighted = labor_call(0);
  weighted.weighted = true;
  EXPECT_THROW(source.sample_neighbors(at::zeros({1}, at::kLong), 5, weighted), OptionError);
  SampleOptions bad_mix = labor_call(0);
  bad_mix.labor.mix = 1.5;  // as a request from the network could say
  EXPECT_THROW(source.sample_neighbors(at::zeros({1}, at::kLong), 5, bad_mix), OptionError);
  EXPECT_THROW(labor_variates(0, 0, 0, 0, {.batch_dependency = 0}), OptionError);
  EXPECT_THROW(
      NeighborSampler(&source, {.fanouts = {5}, .replace = true, .method = SamplingMethod::kLabor}),
      OptionError);
}

}  // namespace
}  // namespace graphloom::sampling
