// Counter-based random streams: determined by their key, uniform within bounds.
#include <gtest/gtest.h>

#include <vector>

#include "graphloom/base/random.h"

namespace graphloom {
namespace {

TEST(RandomStream, SameKeySameSequenceDifferentKeyDifferent) {
  RandomStream a(stream_key({1, 2, 3}));
  RandomStream b(stream_key({1, 2, 3}));
  RandomStream c(stream_key({1, 2, 4}));
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    differ += x != c.next();
  }
  EXPECT_GT(differ, 95);
}

TEST(RandomStream, UniformStaysInBoundAndCoversIt) {
  RandomStream rng(stream_key({7}));
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t x = rng.uniform(10);
    ASSERT_LT(x, 10u);
    ++counts[x];
  }
  for (int count : counts) EXPECT_NEAR(count, 10000, 500);  // ~5 sigma
}

TEST(RandomStream, NormalHasUnitVariance) {
  RandomStream rng(stream_key({9}));
  double sum = 0;
  double sum_sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = rng.normal();
    sum += x;
    sum_sq += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.02);
}

}  // namespace
}  // namespace graphloom
