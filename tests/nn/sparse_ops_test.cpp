// Aggregation, SDDMM and edge softmax: values against dense references and gradients against
// central finite differences in double precision.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <optional>

#include "graphloom/base/error.h"
#include "graphloom/nn/sparse_ops.h"

namespace graphloom::nn {
namespace {

// 3 destinations over 5 sources: d0 <- {0, 2, 3}, d1 <- {}, d2 <- {1, 4, 4 (twice), 0}.
BlockView small_block() {
  return {torch::tensor({0, 3, 3, 7}, torch::kLong),
          torch::tensor({0, 2, 3, 1, 4, 4, 0}, torch::kLong), 5};
}

// The dense [num_dst, num_src] adjacency (edge multiplicity) of a block.
torch::Tensor dense(const BlockView& b) {
  torch::Tensor a = torch::zeros({b.num_dst(), b.num_src}, torch::kDouble);
  for (int64_t d = 0; d < b.num_dst(); ++d) {
    for (int64_t e = b.indptr[d].item<int64_t>(); e < b.indptr[d + 1].item<int64_t>(); ++e) {
      a[d][b.indices[e].item<int64_t>()] += 1;
    }
  }
  return a;
}

// Max |analytic - numeric| gradient of sum(f(inputs) * probe) over every input element.
double gradient_error(const std::function<torch::Tensor(const std::vector<torch::Tensor>&)>& f,
                      std::vector<torch::Tensor> inputs) {
  for (auto& t : inputs) t = t.detach().clone().set_requires_grad(true);
  const torch::Tensor probe = torch::randn_like(f(inputs));
  (f(inputs) * probe).sum().backward();
  double worst = 0;
  const double eps = 1e-6;
  for (auto& t : inputs) {
    const torch::Tensor analytic = t.grad().clone();
    auto flat = t.data().view(-1);
    for (int64_t i = 0; i < flat.numel(); ++i) {
      const double saved = flat[i].item<double>();
      flat[i] = saved + eps;
      const double plus = (f(inputs) * probe).sum().item<double>();
      flat[i] = saved - eps;
      const double minus = (f(inputs) * probe).sum().item<double>();
      flat[i] = saved;
      worst = std::max(worst,
                       std::abs((plus - minus) / (2 * eps) - analytic.view(-1)[i].item<double>()));
    }
  }
  return worst;
}

TEST(Aggregate, SumAndMeanMatchDenseProducts) {
  const BlockView b = small_block();
  const torch::Tensor x = torch::randn({5, 4}, torch::kDouble);
  const torch::Tensor a = dense(b);
  EXPECT_TRUE(torch::allclose(aggregate(b, x, Reduce::kSum), a.matmul(x)));
  const torch::Tensor degree = a.sum(1, true).clamp_min(1);
  EXPECT_TRUE(torch::allclose(aggregate(b, x, Reduce::kMean), a.matmul(x) / degree));
  const torch::Tensor w = torch::rand({7}, torch::kDouble);
  torch::Tensor weighted = torch::zeros({3, 4}, torch::kDouble);
  weighted.index_add_(0, torch::tensor({0, 0, 0, 2, 2, 2, 2}),
                      x.index_select(0, b.indices) * w.unsqueeze(1));
  EXPECT_TRUE(torch::allclose(aggregate(b, x, Reduce::kSum, w), weighted));
}

TEST(Aggregate, MaxTakesElementwiseMaximumAndZeroForNoEdges) {
  const BlockView b = small_block();
  const torch::Tensor x = torch::randn({5, 3}, torch::kDouble);
  const torch::Tensor out = aggregate(b, x, Reduce::kMax);
  EXPECT_TRUE(
      torch::allclose(out[0], std::get<0>(x.index_select(0, torch::tensor({0, 2, 3})).max(0))));
  EXPECT_TRUE(torch::allclose(out[1], torch::zeros({3}, torch::kDouble)));
  EXPECT_TRUE(
      torch::allclose(out[2], std::get<0>(x.index_select(0, torch::tensor({1, 4, 0})).max(0))));
}

TEST(Aggregate, GradientsMatchFiniteDifferences) {
  const BlockView b = small_block();
  const torch::Tensor x = torch::randn({5, 2, 3}, torch::kDouble);
  for (Reduce r : {Reduce::kSum, Reduce::kMean, Reduce::kMax}) {
    EXPECT_LT(gradient_error([&](const auto& in) { return aggregate(b, in[0], r); }, {x}), 1e-6)
        << static_cast<int>(r);
  }
  const torch::Tensor w = torch::rand({7, 2}, torch::kDouble);
  EXPECT_LT(gradient_error([&](const auto& in) { return aggregate(b, in[0], Reduce::kSum, in[1]); },
                           {x, w}),
            1e-6);
}

TEST(Aggregate, SelfAndNeighborsIsDestinationRowsBesideTheAggregate) {
  const BlockView b = small_block();
  const torch::Tensor x = torch::randn({5, 4}, torch::kDouble);
  for (const Reduce reduce : {Reduce::kSum, Reduce::kMean}) {
    const torch::Tensor both = self_and_neighbors(b, x, reduce);
    EXPECT_TRUE(torch::equal(both.narrow(1, 0, 4), x.slice(0, 0, b.num_dst())));
    EXPECT_TRUE(torch::allclose(both.narrow(1, 4, 4), aggregate(b, x, reduce)));
    const auto f = [&](const std::vector<torch::Tensor>& in) {
      return self_and_neighbors(b, in[0], reduce);
    };
    EXPECT_LT(gradient_error(f, {x}), 1e-6);
    // Reading a table in place: the same values, and the gradient reaches the table's rows.
    BlockView over_rows = b;
    over_rows.source_rows = torch::tensor({6, 0, 3, 3, 1}, torch::kLong);
    const torch::Tensor table = torch::randn({7, 4}, torch::kDouble);
    const torch::Tensor gathered = table.index_select(0, over_rows.source_rows);
    EXPECT_TRUE(torch::allclose(self_and_neighbors(over_rows, table, reduce),
                                self_and_neighbors(b, gathered, reduce)));
    const auto g = [&](const std::vector<torch::Tensor>& in) {
      return self_and_neighbors(over_rows, in[0], reduce);
    };
    EXPECT_LT(gradient_error(g, {table}), 1e-6);
  }
  EXPECT_THROW(self_and_neighbors(b, x, Reduce::kMax), Error);
  EXPECT_THROW(self_and_neighbors(b, x.slice(0, 0, 4), Reduce::kSum), Error);
}

TEST(Aggregate, MeansOverABlockWithEdgeWeightsWeighEachMessage) {
  BlockView b = small_block();
  b.edge_weights = torch::rand({7}, torch::kFloat) + 0.5;  // LABOR-*'s importance weights
  const torch::Tensor x = torch::randn({5, 4}, torch::kDouble);
  const torch::Tensor w = b.edge_weights.to(torch::kDouble);
  const torch::Tensor degree = torch::tensor({3.0, 1.0, 4.0}, torch::kDouble).unsqueeze(1);
  const torch::Tensor expected = aggregate(small_block(), x, Reduce::kSum, w) / degree;
  for (const bool generic : {false, true}) {
    std::optional<GenericOpsScope> scope;
    if (generic) scope.emplace();
    EXPECT_TRUE(torch::allclose(aggregate(b, x, Reduce::kMean), expected)) << generic;
    EXPECT_TRUE(torch::allclose(self_and_neighbors(b, x, Reduce::kMean).narrow(1, 4, 4), expected))
        << generic;
    // Sums and maxima ignore them.
    EXPECT_TRUE(
        torch::allclose(aggregate(b, x, Reduce::kSum), aggregate(small_block(), x, Reduce::kSum)));
    const auto f = [&](const std::vector<torch::Tensor>& in) {
      return self_and_neighbors(b, in[0], Reduce::kMean);
    };
    EXPECT_LT(gradient_error(f, {x}), 1e-6) << generic;
  }
  b.edge_weights = torch::ones({6});
  EXPECT_THROW(aggregate(b, x, Reduce::kMean), Error);
}

TEST(Aggregate, OverATableReadsTheSourcesRowsInPlace) {
  BlockView b = small_block();
  b.source_rows = torch::tensor({6, 0, 3, 3, 1}, torch::kLong);  // two sources share a row
  const torch::Tensor table = torch::randn({7, 4}, torch::kDouble);
  const torch::Tensor gathered = table.index_select(0, b.source_rows);
  const BlockView over = b.over_table(table.size(0));
  EXPECT_EQ(over.num_src, 7);
  for (const Reduce reduce : {Reduce::kSum, Reduce::kMean, Reduce::kMax}) {
    EXPECT_TRUE(torch::allclose(aggregate(over, table, reduce), aggregate(b, gathered, reduce)));
  }
  EXPECT_TRUE(torch::equal(destination_rows(b, table), gathered.slice(0, 0, b.num_dst())));
  EXPECT_TRUE(torch::equal(destination_rows(small_block(), gathered), gathered.slice(0, 0, 3)));
  EXPECT_THROW(small_block().over_table(7), Error);  // no source_rows
}

TEST(EdgeOps, EdgeAddAndSoftmaxValues) {
  const BlockView b = small_block();
  const torch::Tensor a = torch::randn({5, 2}, torch::kDouble);
  const torch::Tensor c = torch::randn({3, 2}, torch::kDouble);
  const torch::Tensor dst = torch::tensor({0, 0, 0, 2, 2, 2, 2});
  EXPECT_TRUE(
      torch::allclose(edge_add(b, a, c), a.index_select(0, b.indices) + c.index_select(0, dst)));
  const torch::Tensor s = torch::randn({7, 2}, torch::kDouble);
  const torch::Tensor y = edge_softmax(b, s);
  EXPECT_TRUE(torch::allclose(y.slice(0, 0, 3), torch::softmax(s.slice(0, 0, 3), 0)));
  EXPECT_TRUE(torch::allclose(y.slice(0, 3, 7), torch::softmax(s.slice(0, 3, 7), 0)));
}

TEST(EdgeOps, GradientsMatchFiniteDifferences) {
  const BlockView b = small_block();
  EXPECT_LT(
      gradient_error([&](const auto& in) { return edge_add(b, in[0], in[1]); },
                     {torch::randn({5, 2}, torch::kDouble), torch::randn({3, 2}, torch::kDouble)}),
      1e-6);
  EXPECT_LT(gradient_error([&](const auto& in) { return edge_softmax(b, in[0]); },
                           {torch::randn({7, 2}, torch::kDouble)}),
            1e-6);
}

TEST(SparseOps, ShapeErrorsAreClear) {
  const BlockView b = small_block();
  EXPECT_THROW(aggregate(b, torch::randn({4, 2}), Reduce::kSum), Error);
  EXPECT_THROW(aggregate(b, torch::randn({5, 2}), Reduce::kMean, torch::ones({7})), Error);
  EXPECT_THROW(edge_softmax(b, torch::randn({6, 1})), Error);
}

}  // namespace
}  // namespace graphloom::nn
