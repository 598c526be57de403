// The row-blocked dense product: the values and gradients of x W^T + b, across block edges,
// alone and fused with relu and dropout.
#include "graphloom/nn/linear.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "graphloom/nn/dropout.h"

namespace graphloom::nn {
namespace {

struct Gradients {
  torch::Tensor out, x, weight, bias;
};

template <typename Product>
Gradients run(const Product& product, const torch::Tensor& x0, const torch::Tensor& w0,
              const torch::Tensor& b0, const torch::Tensor& upstream) {
  torch::Tensor x = x0.clone().requires_grad_(true);
  torch::Tensor w = w0.clone().requires_grad_(true);
  torch::Tensor b = b0.defined() ? b0.clone().requires_grad_(true) : torch::Tensor();
  torch::Tensor out = product(x, w, b);
  (out * upstream).sum().backward();
  return {out.detach(), x.grad(), w.grad(), b.defined() ? b.grad() : torch::Tensor()};
}

TEST(Linear, EqualsAddmmAndItsGradientsOverSeveralBlocksOfRows) {
  torch::manual_seed(0);
  const int64_t rows = 40000;  // more than two blocks, the last one partial
  const torch::Tensor x = torch::randn({rows, 12}, torch::kDouble);
  const torch::Tensor w = torch::randn({5, 12}, torch::kDouble);
  const torch::Tensor b = torch::randn({5}, torch::kDouble);
  const torch::Tensor upstream = torch::randn({rows, 5}, torch::kDouble);
  for (const bool with_bias : {true, false}) {
    const torch::Tensor bias = with_bias ? b : torch::Tensor();
    const Gradients ours =
        run([](auto& x, auto& w, auto& b) { return nn::linear(x, w, b); }, x, w, bias, upstream);
    const Gradients reference =
        run([](auto& x, auto& w,
               auto& b) { return b.defined() ? torch::addmm(b, x, w.t()) : torch::mm(x, w.t()); },
            x, w, bias, upstream);
    EXPECT_TRUE(torch::allclose(ours.out, reference.out, 1e-12, 1e-12)) << with_bias;
    EXPECT_TRUE(torch::allclose(ours.x, reference.x, 1e-12, 1e-12)) << with_bias;
    EXPECT_TRUE(torch::allclose(ours.weight, reference.weight, 1e-9, 1e-9)) << with_bias;
    if (with_bias) {
      EXPECT_TRUE(torch::allclose(ours.bias, reference.bias, 1e-9, 1e-9));
    }
  }
}

TEST(Linear, FusedWithReluAndDropoutEqualsTheirCompositionWithTheSameMask) {
  torch::manual_seed(1);
  const int64_t rows = 40000;  // blocks of rows start at element 16384 * 7, a whole mask chunk
  const torch::Tensor x = torch::randn({rows, 12}, torch::kDouble);
  const torch::Tensor w = torch::randn({7, 12}, torch::kDouble);
  const torch::Tensor b = torch::randn({7}, torch::kDouble);
  const torch::Tensor upstream = torch::randn({rows, 7}, torch::kDouble);
  for (const bool with_bias : {true, false}) {
    const torch::Tensor bias = with_bias ? b : torch::Tensor();
    torch::manual_seed(5);
    const Gradients fused =
        run([](auto& x, auto& w, auto& b) { return linear_relu_dropout(x, w, b, 0.4, true); }, x, w,
            bias, upstream);
    torch::manual_seed(5);
    const Gradients composed =
        run([](auto& x, auto& w, auto& b) { return relu_dropout(nn::linear(x, w, b), 0.4, true); },
            x, w, bias, upstream);
    const double kept = (fused.out > 0).to(torch::kDouble).mean().item<double>();
    EXPECT_GT(kept, 0.2) << with_bias;  // about (1 - 0.4) / 2: the mask is not all zeros
    EXPECT_LT(kept, 0.4) << with_bias;
    EXPECT_TRUE(torch::allclose(fused.out, composed.out, 1e-12, 1e-12)) << with_bias;
    EXPECT_TRUE(torch::allclose(fused.x, composed.x, 1e-12, 1e-12)) << with_bias;
    EXPECT_TRUE(torch::allclose(fused.weight, composed.weight, 1e-9, 1e-9)) << with_bias;
    if (with_bias) {
      EXPECT_TRUE(torch::allclose(fused.bias, composed.bias, 1e-9, 1e-9));
    }
  }
  // Evaluation: relu only.
  EXPECT_TRUE(torch::allclose(linear_relu_dropout(x, w, b, 0.4, false),
                              torch::relu(torch::addmm(b, x, w.t())), 1e-12, 1e-12));
}

TEST(Linear, AnInputWithoutGradientGetsNone) {
  const torch::Tensor x = torch::randn({20, 4});
  const torch::Tensor w = torch::randn({3, 4}, torch::requires_grad());
  nn::linear(x, w).sum().backward();
  EXPECT_FALSE(x.grad().defined());
  EXPECT_TRUE(torch::allclose(w.grad(), x.sum(0).unsqueeze(0).expand({3, 4})));
}

}  // namespace
}  // namespace graphloom::nn
