// The native dropout: keep rate, scaling, reproducibility under a seed, and a backward mask
// identical to the forward one.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/nn/dropout.h"

namespace graphloom::nn {
namespace {

TEST(FastDropout, KeepsOneMinusPAndScales) {
  const torch::Tensor x = torch::ones({200000});
  for (double p : {0.1, 0.5, 0.6}) {
    const torch::Tensor y = fast_dropout(x, p, /*training=*/true);
    const double kept = (y > 0).to(torch::kDouble).mean().item<double>();
    EXPECT_NEAR(kept, 1 - p, 0.005) << p;
    EXPECT_NEAR(y.max().item<double>(), 1 / (1 - p), 1e-5);
    EXPECT_NEAR(y.mean().item<double>(), 1.0, 0.02);
  }
  EXPECT_TRUE(torch::equal(fast_dropout(x, 0.5, /*training=*/false), x));
  EXPECT_THROW(fast_dropout(x, 1.0, true), Error);
}

TEST(FastDropout, SeededAndBackwardUsesTheSameMask) {
  torch::manual_seed(3);
  const torch::Tensor a = fast_dropout(torch::ones({5000}), 0.5, true);
  torch::manual_seed(3);
  const torch::Tensor b = fast_dropout(torch::ones({5000}), 0.5, true);
  EXPECT_TRUE(torch::equal(a, b));
  const torch::Tensor x = torch::randn({3000}).set_requires_grad(true);
  const torch::Tensor y = fast_dropout(x, 0.3, true);
  y.sum().backward();
  // d(sum y)/dx is the scaled mask: non-zero exactly where y kept x.
  EXPECT_TRUE(torch::equal(x.grad() != 0, y != 0));
  EXPECT_TRUE(torch::allclose(x.grad().masked_select(y != 0), torch::full({1}, 1 / 0.7)));
}

TEST(ReluDropout, EqualsDropoutOfReluWithTheSameMaskAndItsGradient) {
  const torch::Tensor x = torch::randn({20000}, torch::kDouble);
  torch::manual_seed(5);
  const torch::Tensor unfused = fast_dropout(torch::relu(x), 0.4, true);
  torch::manual_seed(5);
  const torch::Tensor input = x.clone().set_requires_grad(true);
  const torch::Tensor fused = relu_dropout(input, 0.4, true);
  EXPECT_TRUE(torch::equal(fused, unfused));
  const torch::Tensor probe = torch::randn_like(x);
  (fused * probe).sum().backward();
  // The unfused chain's gradient: probe / (1 - p) where x > 0 and kept, else 0.
  const torch::Tensor expected = torch::where(unfused > 0, probe / 0.6, torch::zeros_like(probe));
  EXPECT_TRUE(torch::allclose(input.grad(), expected));
  // One node (keeping a byte per element), not relu's and dropout's.
  EXPECT_NE(fused.grad_fn()->name().find("ReluDropoutFunction"), std::string::npos);

  // p = 0 while training is relu, gradient included; evaluation is relu.
  const torch::Tensor other = x.clone().set_requires_grad(true);
  const torch::Tensor kept = relu_dropout(other, 0.0, true);
  EXPECT_TRUE(torch::equal(kept, torch::relu(x)));
  kept.sum().backward();
  EXPECT_TRUE(torch::equal(other.grad(), (x > 0).to(torch::kDouble)));
  EXPECT_TRUE(torch::equal(relu_dropout(x, 0.5, /*training=*/false), torch::relu(x)));
  EXPECT_THROW(relu_dropout(x, 1.0, true), Error);
}

}  // namespace
}  // namespace graphloom::nn
