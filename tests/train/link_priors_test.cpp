// Recency weights of training pairs and the popularity prior, against hand-computed values.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/base/error.h"
#include "graphloom/train/link_priors.h"
#include "support/test_support.h"

namespace graphloom::train {
namespace {

TEST(LinkPriors, RecencyWeightsHalveEveryHalfLifeBeforeTheLatestPair) {
  TrainingInputs inputs;
  inputs.name = "timed";
  inputs.edge_splits["train"] = at::zeros({3, 2}, at::kLong);
  EXPECT_FALSE(recency_weights(inputs, 0).defined());  // off
  EXPECT_NE(testing::error_of([&] {
              recency_weights(inputs, 10);
            }).find("recency_half_life_days needs the time of every training pair"),
            std::string::npos);
  constexpr int64_t kDay = 86400;
  inputs.edge_split_times["train"] = at::tensor({20 * kDay, 0 * kDay, 10 * kDay}, at::kLong);
  EXPECT_TRUE(at::allclose(recency_weights(inputs, 10), at::tensor({1.0, 0.25, 0.5}, at::kDouble)));
  EXPECT_NE(testing::error_of([&] { recency_weights(inputs, -1); }).find("must be positive"),
            std::string::npos);
  inputs.edge_split_times["train"] = at::zeros({2}, at::kLong);
  EXPECT_NE(testing::error_of([&] {
              recency_weights(inputs, 10);
            }).find("2 training pair times for 3 training pairs"),
            std::string::npos);
}

TEST(LinkPriors, PopularityPriorIsTheLogOfEachDestinationsSummedWeight) {
  const at::Tensor pairs = at::tensor({0, 2, 1, 2, 0, 3}, at::kLong).view({3, 2});
  const at::Tensor counted = popularity_prior(pairs, {}, 4, /*symmetric=*/false);
  EXPECT_TRUE(at::allclose(counted, at::log1p(at::tensor({0.0f, 0.0f, 2.0f, 1.0f}))));
  const at::Tensor weighted =
      popularity_prior(pairs, at::tensor({0.5, 0.25, 1.0}, at::kDouble), 4, /*symmetric=*/true);
  EXPECT_TRUE(at::allclose(weighted, at::log1p(at::tensor({1.5f, 0.25f, 0.75f, 1.0f}))));
  EXPECT_THROW(popularity_prior(pairs, at::ones({2}), 4, false), Error);
}

}  // namespace
}  // namespace graphloom::train
