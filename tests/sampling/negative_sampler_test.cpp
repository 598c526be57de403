// Negative samplers: ranges, counts, and the degree^0.75 distribution.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "graphloom/base/error.h"
#include "graphloom/sampling/negative_sampler.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

TEST(NegativeSampler, UniformRepeatsSourcesAndStaysInRange) {
  const UniformNegativeSampler sampler(50);
  const at::Tensor src = at::tensor({1, 2, 3}, at::kLong);
  const NegativeEdges negatives = sampler.sample(src, src, 4, 9);
  EXPECT_TRUE(
      at::equal(negatives.src, at::tensor({1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, at::kLong)));
  EXPECT_GE(negatives.dst.min().item<int64_t>(), 0);
  EXPECT_LT(negatives.dst.max().item<int64_t>(), 50);
  EXPECT_TRUE(at::equal(negatives.dst, sampler.sample(src, src, 4, 9).dst));  // keyed
  EXPECT_THROW(sampler.sample(src, src, 0, 9), Error);
}

TEST(NegativeSampler, BothEndsDrawsTheSourcesUniformlyToo) {
  const UniformNegativeSampler sampler(10, /*both_ends=*/true);
  EXPECT_TRUE(sampler.corrupts_src());
  EXPECT_FALSE(UniformNegativeSampler(10).corrupts_src());
  const at::Tensor src = at::zeros({20000}, at::kLong);
  const NegativeEdges negatives = sampler.sample(src, src, 1, 3);
  EXPECT_TRUE(at::equal(negatives.src, sampler.sample(src, src, 1, 3).src));  // keyed
  for (const at::Tensor& ends : {negatives.src, negatives.dst}) {
    const at::Tensor counts = at::bincount(ends, {}, 10);
    std::vector<int64_t> observed(10);
    for (int64_t i = 0; i < 10; ++i) observed[i] = counts[i].item<int64_t>();
    EXPECT_LT(testing::chi_square(observed, std::vector<double>(10, 0.1)), 27.88);  // df 9, 0.001
  }
  EXPECT_FALSE(at::equal(negatives.src, negatives.dst));  // two draws, not one copied
}

TEST(NegativeSampler, DegreeBasedFollowsDegreeToThePower) {
  const at::Tensor degrees = at::tensor({0, 1, 16, 81}, at::kLong);
  const DegreeNegativeSampler sampler(degrees, 0.75);
  const at::Tensor src = at::zeros({20000}, at::kLong);
  const at::Tensor dst = sampler.sample(src, src, 1, 4).dst;
  const at::Tensor counts = at::bincount(dst, {}, 4);
  EXPECT_EQ(counts[0].item<int64_t>(), 0);  // degree 0: never
  // Weights 1, 8, 27 out of 36.
  const std::vector<int64_t> observed{counts[1].item<int64_t>(), counts[2].item<int64_t>(),
                                      counts[3].item<int64_t>()};
  EXPECT_LT(testing::chi_square(observed, {1.0 / 36, 8.0 / 36, 27.0 / 36}), 13.82);  // df 2
}

}  // namespace
}  // namespace graphloom::sampling
