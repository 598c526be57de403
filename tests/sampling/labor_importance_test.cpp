// LABOR-*: the optimized probabilities against a plain reference of the paper's rounds, the
// variance equation they solve, fewer expected nodes than LABOR-0, inclusion frequencies by a
// chi-square test, the importance weights, typed graphs, and the sampler's blocks.
#include "graphloom/sampling/labor_importance.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/graph/build.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

constexpr int64_t kSharingSeeds = 40, kSharedCandidates = 80;

// Seeds 0..39, each with 3..60 distinct in-neighbors among nodes 40..119, skewed toward the
// low ids so that some neighbors are shared by most seeds and others by few.
graph::CscGraph skewed_shared_graph() {
  RandomStream rng(7);
  std::vector<int64_t> src, dst;
  for (int64_t s = 0; s < kSharingSeeds; ++s) {
    const int64_t degree = 3 + static_cast<int64_t>(rng.uniform(58));
    std::vector<bool> taken(kSharedCandidates, false);
    for (int64_t picked = 0; picked < degree;) {
      const double u = rng.uniform_real();
      const auto t = static_cast<int64_t>(static_cast<double>(kSharedCandidates) * u * u);
      if (taken[static_cast<std::size_t>(t)]) continue;
      taken[static_cast<std::size_t>(t)] = true;
      src.push_back(kSharingSeeds + t);
      dst.push_back(s);
      ++picked;
    }
  }
  graph::CooInput input;
  input.src = at::tensor(src, at::kLong);
  input.dst = at::tensor(dst, at::kLong);
  input.num_nodes = kSharingSeeds + kSharedCandidates;
  input.keep_edge_ids = false;  // edge ids are then CSC positions, as all_'s order
  return graph::csc_from_coo(input);
}

CandidateRows rows_of(const SampledEdges& all, int64_t fanout) {
  return {all.indptr, all.neighbors, at::full({all.indptr.numel() - 1}, fanout, at::kLong)};
}

// The paper's rounds in plain loops, one row at a time (as DGL's CPU kernel runs them).
std::vector<double> reference_probabilities(const SampledEdges& all, int64_t k, int rounds) {
  const int64_t rows = all.indptr.numel() - 1;
  const auto begin = [&](int64_t s) { return all.indptr[s].item<int64_t>(); };
  const auto end = [&](int64_t s) { return all.indptr[s + 1].item<int64_t>(); };
  const auto node = [&](int64_t e) { return all.neighbors[e].item<int64_t>(); };
  std::vector<double> c(static_cast<std::size_t>(rows));
  for (int64_t s = 0; s < rows; ++s) c[s] = static_cast<double>(k) / (end(s) - begin(s));
  std::map<int64_t, double> pi;
  for (int64_t e = 0; e < all.neighbors.numel(); ++e) pi[node(e)] = 1.0;
  double before = std::numeric_limits<double>::infinity();
  for (int round = 0; round < rounds; ++round) {
    std::map<int64_t, double> highest;
    for (int64_t s = 0; s < rows; ++s) {
      for (int64_t e = begin(s); e < end(s); ++e) {
        highest[node(e)] = std::max(highest[node(e)], c[s]);
      }
    }
    for (auto& [t, value] : pi) value *= highest[t];
    for (int64_t s = 0; s < rows; ++s) {
      const double d = static_cast<double>(end(s) - begin(s));
      const double target = d * d / std::min(static_cast<double>(k), d);
      double sum = 0;
      do {
        sum = 0;
        for (int64_t e = begin(s); e < end(s); ++e) sum += 1 / std::min(1.0, c[s] * pi[node(e)]);
        c[s] *= sum / target;
      } while (std::min(sum, target) / std::max(sum, target) < 1 - 1e-4);
    }
    double expected = 0;
    for (const auto& [t, value] : pi) expected += std::min(1.0, value);
    if (expected / before >= 1 - 1e-4) break;
    before = expected;
  }
  std::vector<double> p;
  for (int64_t s = 0; s < rows; ++s) {
    for (int64_t e = begin(s); e < end(s); ++e) p.push_back(std::min(1.0, c[s] * pi[node(e)]));
  }
  return p;
}

// Expected distinct nodes: node t is sampled when u_t < its highest probability.
double expected_nodes(const SampledEdges& all, const at::Tensor& p) {
  const auto unique = at::_unique2(all.neighbors, false, true);
  return at::zeros({std::get<0>(unique).numel()}, at::kDouble)
      .scatter_reduce_(0, std::get<1>(unique), p, "amax", false)
      .sum()
      .item<double>();
}

SampleOptions importance_call(uint64_t batch) {
  return {.labor = labor_variates(/*seed=*/3, /*epoch=*/0, batch, /*layer=*/0, {})};
}

class LaborImportance : public ::testing::Test {
 protected:
  LaborImportance() : source_(skewed_shared_graph()) {
    all_ = source_.sample_neighbors(seeds_, -1, {});
  }
  const at::Tensor seeds_ = at::arange(kSharingSeeds, at::kLong);
  LocalNeighborSource source_;
  SampledEdges all_;
};

TEST_F(LaborImportance, ProbabilitiesAreThoseOfThePapersRounds) {
  // Both solvers: row by row (the host's) and every row at once (a device's).
  for (const LaborSolver solver : {LaborSolver::kAuto, LaborSolver::kTensorOps}) {
    for (const int rounds : {0, 1, 3}) {
      const at::Tensor p = labor_inclusion_probabilities(rows_of(all_, 5), rounds, solver);
      const std::vector<double> expected = reference_probabilities(all_, 5, rounds);
      ASSERT_EQ(p.numel(), static_cast<int64_t>(expected.size()));
      for (std::size_t e = 0; e < expected.size(); ++e) {
        EXPECT_NEAR(p[static_cast<int64_t>(e)].item<double>(), expected[e], 2e-3 * expected[e])
            << "rounds " << rounds << ", edge " << e << ", solver " << static_cast<int>(solver);
      }
    }
  }
}

TEST_F(LaborImportance, EachRowKeepsNeighborSamplingsVarianceWithFewerExpectedNodes) {
  const at::Tensor labor0 = labor_inclusion_probabilities(rows_of(all_, 5), 0);
  const at::Tensor one = labor_inclusion_probabilities(rows_of(all_, 5), 1);
  const at::Tensor converged = labor_inclusion_probabilities(rows_of(all_, 5), -1);
  for (const at::Tensor& p : {one, converged}) {
    for (int64_t s = 0; s < kSharingSeeds; ++s) {
      const int64_t begin = all_.indptr[s].item<int64_t>();
      const int64_t end = all_.indptr[s + 1].item<int64_t>();
      const double d = static_cast<double>(end - begin);
      const double sum = p.slice(0, begin, end).reciprocal().sum().item<double>();
      EXPECT_NEAR(sum, d * d / std::min(5.0, d), 1e-3 * sum) << "seed " << s;
    }
  }
  const double before = expected_nodes(all_, labor0);
  EXPECT_LT(expected_nodes(all_, one), 0.95 * before);
  EXPECT_LE(expected_nodes(all_, converged), expected_nodes(all_, one) * (1 + 1e-6));
}

TEST_F(LaborImportance, EdgesAreKeptWithTheirProbabilities) {
  const int rounds = 2;
  const at::Tensor p = labor_inclusion_probabilities(rows_of(all_, 5), rounds);
  // The edges of one node share its variate: one edge per node gives independent counts.
  std::map<int64_t, int64_t> edge_of_node;
  for (int64_t e = 0; e < p.numel(); ++e) {
    const double pe = p[e].item<double>();
    if (pe > 0.05 && pe < 0.95) edge_of_node.try_emplace(all_.neighbors[e].item<int64_t>(), e);
  }
  ASSERT_GT(edge_of_node.size(), 20u);
  const int64_t calls = 1500;
  at::Tensor kept = at::zeros({p.numel()}, at::kLong);
  for (int64_t batch = 0; batch < calls; ++batch) {
    const SampledEdges edges =
        sample_labor_importance(source_, seeds_, 5, importance_call(batch), rounds);
    kept.index_add_(0, edges.edge_ids, at::ones_like(edges.edge_ids));
  }
  double statistic = 0;
  for (const auto& [node, e] : edge_of_node) {
    const double pe = p[e].item<double>();
    const double expected = static_cast<double>(calls) * pe;
    const double deviation = static_cast<double>(kept[e].item<int64_t>()) - expected;
    statistic += deviation * deviation / (expected * (1 - pe));
  }
  // Wilson-Hilferty's chi-square quantile at p = 1e-4 (z = 3.719) for df degrees of freedom.
  const double df = static_cast<double>(edge_of_node.size());
  const double quantile = df * std::pow(1 - 2 / (9 * df) + 3.719 * std::sqrt(2 / (9 * df)), 3);
  EXPECT_LT(statistic, quantile) << df << " degrees of freedom";
}

TEST_F(LaborImportance, WeightsAreInverseProbabilitiesSummingToEachRowsPicks) {
  const at::Tensor p = labor_inclusion_probabilities(rows_of(all_, 5), 2);
  const SampledEdges edges = sample_labor_importance(source_, seeds_, 5, importance_call(9), 2);
  ASSERT_EQ(edges.weights.numel(), edges.neighbors.numel());
  const at::Tensor p_kept = p.index_select(0, edges.edge_ids);
  for (int64_t s = 0; s < kSharingSeeds; ++s) {
    const int64_t begin = edges.indptr[s].item<int64_t>();
    const int64_t end = edges.indptr[s + 1].item<int64_t>();
    if (begin == end) continue;
    const at::Tensor w = edges.weights.slice(0, begin, end).to(at::kDouble);
    EXPECT_NEAR(w.sum().item<double>(), static_cast<double>(end - begin), 1e-4);
    const at::Tensor scaled = w * p_kept.slice(0, begin, end);  // constant within the row
    EXPECT_TRUE(at::allclose(scaled, scaled[0].expand_as(scaled), 1e-5)) << "seed " << s;
  }
}

TEST_F(LaborImportance, TheHostsLoopsKeepWhatTheTensorOpsKeep) {
  for (uint64_t batch = 0; batch < 5; ++batch) {
    const SampledEdges host =
        sample_labor_importance(source_, seeds_, 5, importance_call(batch), 3);
    const SampledEdges ops = sample_labor_importance(source_, seeds_, 5, importance_call(batch), 3,
                                                     LaborSolver::kTensorOps);
    EXPECT_TRUE(at::equal(host.indptr, ops.indptr)) << batch;
    EXPECT_TRUE(at::equal(host.neighbors, ops.neighbors)) << batch;
    EXPECT_TRUE(at::equal(host.edge_ids, ops.edge_ids)) << batch;
    EXPECT_TRUE(at::allclose(host.weights, ops.weights, 1e-4)) << batch;
  }
}

TEST_F(LaborImportance, NoRoundsKeepWhatLaborZeroKeeps) {
  for (uint64_t batch = 0; batch < 5; ++batch) {
    const SampledEdges star =
        sample_labor_importance(source_, seeds_, 5, importance_call(batch), 0);
    const SampledEdges zero = source_.sample_neighbors(seeds_, 5, importance_call(batch));
    EXPECT_TRUE(at::equal(star.indptr, zero.indptr));
    EXPECT_TRUE(at::equal(star.neighbors, zero.neighbors));
    EXPECT_TRUE(at::equal(star.edge_ids, zero.edge_ids));
    EXPECT_TRUE(at::allclose(star.weights, at::ones_like(star.weights)));
  }
}

TEST(LaborImportanceTyped, EachEdgeTypeIsSampledAsItsOwnGraph) {
  const graph::CscGraph whole = testing::random_graph(200, 6000, 11);
  const at::Tensor types = (whole.indices.to(at::kLong) % 3).to(at::kChar);  // any labelling
  graph::CooInput typed_input;
  typed_input.src = whole.indices.to(at::kLong);
  typed_input.dst = at::arange(200, at::kLong).repeat_interleave(whole.indptr.diff());
  typed_input.edge_types = types;
  typed_input.num_nodes = 200;
  const LocalNeighborSource typed(graph::csc_from_coo(typed_input));
  const at::Tensor seeds = at::arange(0, 200, 3, at::kLong);
  SampleOptions options = importance_call(4);
  options.edge_type_fanouts = {4, 0, 9};
  const SampledEdges picks = sample_labor_importance(typed, seeds, 1, options, 2);
  EXPECT_FALSE(at::any(picks.edge_types == 1).item<bool>());
  for (const int64_t r : {0, 2}) {
    graph::CooInput one = typed_input;
    const at::Tensor of_type = (types == r).nonzero().squeeze(1);
    one.src = typed_input.src.index_select(0, of_type);
    one.dst = typed_input.dst.index_select(0, of_type);
    one.edge_types = at::Tensor();
    const LocalNeighborSource alone(graph::csc_from_coo(one));
    const SampledEdges expected =
        sample_labor_importance(alone, seeds, r == 0 ? 4 : 9, importance_call(4), 2);
    const at::Tensor mine = picks.edge_types == r;
    const at::Tensor got = picks.neighbors.masked_select(mine);
    EXPECT_TRUE(at::equal(std::get<0>(got.sort()), std::get<0>(expected.neighbors.sort())))
        << "edge type " << r;
    EXPECT_TRUE(at::allclose(std::get<0>(picks.weights.masked_select(mine).sort()),
                             std::get<0>(expected.weights.sort())))
        << "edge type " << r;
  }
}

TEST(LaborImportanceSampler, BlocksCarryWeightsAndReachFewerNodesThanLaborZero) {
  const graph::CscGraph graph = testing::random_graph(3000, 90000, 5);
  const LocalNeighborSource source(graph);
  const auto sampler = [&](int64_t rounds) {
    return NeighborSampler(&source, {.fanouts = {5, 5},
                                     .seed = 1,
                                     .method = SamplingMethod::kLabor,
                                     .labor = {.importance_sampling = rounds}});
  };
  const NeighborSampler zero = sampler(0), star = sampler(3);
  double zero_nodes = 0, star_nodes = 0;
  for (uint64_t batch = 0; batch < 8; ++batch) {
    const at::Tensor seeds = at::arange(static_cast<int64_t>(batch), 3000, 8, at::kLong);
    const MiniBatch a = zero.sample(seeds, 0, batch);
    const MiniBatch b = star.sample(seeds, 0, batch);
    zero_nodes += static_cast<double>(a.input_nodes().numel());
    star_nodes += static_cast<double>(b.input_nodes().numel());
    for (const Block& block : b.blocks) {
      ASSERT_TRUE(block.edge_weights.defined());
      EXPECT_EQ(block.edge_weights.numel(), block.num_edges());
    }
    EXPECT_FALSE(a.blocks.front().edge_weights.defined());
    // Reproducible: the same arguments give the same batch.
    EXPECT_TRUE(at::equal(b.input_nodes(), star.sample(seeds, 0, batch).input_nodes()));
  }
  EXPECT_LT(star_nodes, zero_nodes);
  EXPECT_THROW(NeighborSampler(&source, {.fanouts = {5}, .labor = {.importance_sampling = 1}}),
               OptionError);
}

}  // namespace
}  // namespace graphloom::sampling
