// The row-blocked dense product: the values and gradients of x W^T + b, across block edges,
// alone and fused with relu and dropout.
#include "graphloom/nn/linear.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "graphloom/nn/dropout.h"
#include "support/test_support.h"

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

// Double-precision x [rows, 12], weight [width, 12], bias [width] and an upstream gradient.
struct Inputs {
  torch::Tensor x, w, b, upstream;
};

Inputs random_inputs(uint64_t seed, int64_t rows, int64_t width) {
  torch::manual_seed(seed);
  return {torch::randn({rows, 12}, torch::kDouble), torch::randn({width, 12}, torch::kDouble),
          torch::randn({width}, torch::kDouble), torch::randn({rows, width}, torch::kDouble)};
}

void expect_same(const Gradients& ours, const Gradients& reference, bool with_bias) {
  EXPECT_TRUE(torch::allclose(ours.out, reference.out, 1e-12, 1e-12)) << with_bias;
  EXPECT_TRUE(torch::allclose(ours.x, reference.x, 1e-12, 1e-12)) << with_bias;
  EXPECT_TRUE(torch::allclose(ours.weight, reference.weight, 1e-9, 1e-9)) << with_bias;
  if (with_bias) {
    EXPECT_TRUE(torch::allclose(ours.bias, reference.bias, 1e-9, 1e-9));
  }
}

TEST(Linear, EqualsAddmmAndItsGradientsOverSeveralBlocksOfRows) {
  // 40,000 rows: more than two blocks, the last one partial.
  const auto [x, w, b, upstream] = random_inputs(0, 40000, 5);
  for (const bool with_bias : {true, false}) {
    const torch::Tensor bias = with_bias ? b : torch::Tensor();
    const Gradients ours =
        run([](auto& x, auto& w, auto& b) { return nn::linear(x, w, b); }, x, w, bias, upstream);
    const Gradients reference =
        run([](auto& x, auto& w,
               auto& b) { return b.defined() ? torch::addmm(b, x, w.t()) : torch::mm(x, w.t()); },
            x, w, bias, upstream);
    expect_same(ours, reference, with_bias);
  }
}

TEST(Linear, FusedWithReluAndDropoutEqualsTheirCompositionWithTheSameMask) {
  // Width 7: blocks of rows start at element 16384 * 7, a whole mask chunk.
  const auto [x, w, b, upstream] = random_inputs(1, 40000, 7);
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
    expect_same(fused, composed, with_bias);
  }
  // Evaluation: relu only.
  EXPECT_TRUE(torch::allclose(linear_relu_dropout(x, w, b, 0.4, false),
                              torch::relu(torch::addmm(b, x, w.t())), 1e-12, 1e-12));
}

// float32 products run on the BLAS that dense_product_blas() names (OpenBLAS where Debian's
// OpenMP build is installed): values and gradients as libtorch computes them in double.
TEST(Linear, Float32ProductsAndGradientsEqualDoublePrecisionOnEitherBlas) {
#if defined(GRAPHLOOM_OPENBLAS_LIBRARY) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)  // sanitized builds do not load OpenBLAS (dense_product.cpp)
  EXPECT_EQ(dense_product_blas().rfind("OpenBLAS", 0), 0u) << dense_product_blas();
#else
  EXPECT_EQ(dense_product_blas(), "libtorch's");
#endif
  const auto [x, w, b, upstream] = random_inputs(2, 40000, 33);
  for (const bool with_bias : {true, false}) {
    const torch::Tensor bias = with_bias ? b : torch::Tensor();
    const auto as_float = [](const torch::Tensor& t) {
      return t.defined() ? t.to(torch::kFloat) : t;
    };
    const Gradients ours = run([](auto& x, auto& w, auto& b) { return nn::linear(x, w, b); },
                               as_float(x), as_float(w), as_float(bias), as_float(upstream));
    const Gradients reference =
        run([](auto& x, auto& w,
               auto& b) { return b.defined() ? torch::addmm(b, x, w.t()) : torch::mm(x, w.t()); },
            x, w, bias, upstream);
    EXPECT_TRUE(torch::allclose(ours.out.to(torch::kDouble), reference.out, 1e-4, 1e-4));
    EXPECT_TRUE(torch::allclose(ours.x.to(torch::kDouble), reference.x, 1e-4, 1e-4));
    // The weight's gradient sums 40,000 rows.
    EXPECT_TRUE(torch::allclose(ours.weight.to(torch::kDouble), reference.weight, 1e-4, 1e-2));
    if (with_bias) {
      EXPECT_TRUE(torch::allclose(ours.bias.to(torch::kDouble), reference.bias, 1e-4, 1e-2));
    }
  }
  // OpenBLAS's threads are the OpenMP pool's: it brought no second libgomp.
  EXPECT_EQ(graphloom::testing::loaded_objects_named("libgomp").size(), 1u);
}

TEST(Linear, AnInputWithoutGradientGetsNone) {
  const torch::Tensor x = torch::randn({20, 4});
  const torch::Tensor w = torch::randn({3, 4}, torch::requires_grad());
  nn::linear(x, w).sum().backward();
  EXPECT_FALSE(x.grad().defined());
  // float32 sums of 20 products in two orders (OpenBLAS, torch's sum): a column summing to near
  // 0 differs by ~1e-6, past allclose's default atol of 1e-8.
  EXPECT_TRUE(torch::allclose(w.grad(), x.sum(0).unsqueeze(0).expand({3, 4}), 1e-5, 1e-5));
}

}  // namespace
}  // namespace graphloom::nn
