// Aggregation, SDDMM and edge softmax: values against dense references and gradients against
// central finite differences in double precision.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

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
