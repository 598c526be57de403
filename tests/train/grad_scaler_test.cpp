// The grad scaler's logic on the CPU (the same ATen kernels run on CUDA): scaling, unscaling,
// skipping steps with inf/NaN gradients, backing off and growing, and its option checks.
#include "graphloom/train/grad_scaler.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "graphloom/base/error.h"

namespace graphloom::train {
namespace {

TEST(GradScaler, ScalesTheLossAndUnscalesTheGradientsExactly) {
  GradScaler scaler({.init_scale = 1024});
  EXPECT_DOUBLE_EQ(scaler.scale(at::full({}, 0.5)).item<double>(), 512.0);
  const at::Tensor grad = at::tensor({1024.0f, -2048.0f, 3.0f});
  const at::Tensor grad_half = at::tensor({512.0f}).to(at::kHalf);
  EXPECT_TRUE(scaler.unscale({grad, at::Tensor(), grad_half}));
  EXPECT_TRUE(at::equal(grad, at::tensor({1.0f, -2.0f, 3.0f / 1024.0f})));
  EXPECT_EQ(grad_half.item<float>(), 0.5f);
}

TEST(GradScaler, AStepWithInfOrNanIsSkippedAndTheScaleBacksOff) {
  for (const float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
    GradScaler scaler({.init_scale = 1024, .backoff_factor = 0.25});
    const at::Tensor fine = at::ones({4});
    const at::Tensor broken = at::tensor({1.0f, bad});
    EXPECT_FALSE(scaler.unscale({fine, broken})) << bad;
    scaler.update();
    EXPECT_DOUBLE_EQ(scaler.current_scale(), 256.0) << bad;
    EXPECT_EQ(scaler.growth_tracker(), 0);
    // The next clean step is taken again.
    EXPECT_TRUE(scaler.unscale({at::ones({2})}));
  }
}

TEST(GradScaler, GrowsAfterGrowthIntervalCleanStepsInARow) {
  GradScaler scaler({.init_scale = 8, .growth_factor = 2, .growth_interval = 3});
  for (int step = 1; step <= 7; ++step) {
    ASSERT_TRUE(scaler.unscale({at::ones({3})}));
    scaler.update();
    // Doubles after steps 3 and 6; the tracker counts the clean steps in between.
    EXPECT_DOUBLE_EQ(scaler.current_scale(), 8.0 * (1 << (step / 3))) << step;
    EXPECT_EQ(scaler.growth_tracker(), step % 3) << step;
  }
  scaler.load(4.0, 2);
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 4.0);
  EXPECT_EQ(scaler.growth_tracker(), 2);
}

TEST(GradScaler, OptionsThatCannotWorkAreRefusedByName) {
  const auto field_of = [](GradScalerOptions options) {
    try {
      GradScaler scaler(options);
    } catch (const OptionError& e) {
      return e.field();
    }
    return std::string("none");
  };
  EXPECT_EQ(field_of({.init_scale = 0}), "init_scale");
  EXPECT_EQ(field_of({.growth_factor = 1}), "growth_factor");
  EXPECT_EQ(field_of({.backoff_factor = 1}), "backoff_factor");
  EXPECT_EQ(field_of({.growth_interval = 0}), "growth_interval");
  EXPECT_EQ(field_of({}), "none");
}

}  // namespace
}  // namespace graphloom::train
