// Link metrics against values computed by hand.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/train/link_metrics.h"

namespace graphloom::train {
namespace {

TEST(LinkMetrics, AucCountsPairsWonWithHalfTies) {
  const at::Tensor positive = at::tensor({0.9, 0.5, 0.2});
  const at::Tensor negative = at::tensor({0.5, 0.1});
  // 0.9 beats both (2), 0.5 ties 0.5 and beats 0.1 (1.5), 0.2 beats 0.1 (1): 4.5 of 6.
  EXPECT_DOUBLE_EQ(roc_auc(positive, negative), 4.5 / 6);
  EXPECT_DOUBLE_EQ(roc_auc(at::tensor({3.0}), at::tensor({1.0, 2.0})), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc(at::tensor({0.0}), at::tensor({1.0, 2.0})), 0.0);
}

TEST(LinkMetrics, HitsAtKUsesTheKthHighestNegative) {
  const at::Tensor negative = at::tensor({0.1, 0.4, 0.3, 0.8});
  const at::Tensor positive = at::tensor({0.9, 0.5, 0.4, 0.2});
  // 2nd highest negative = 0.4: positives strictly above it are 0.9 and 0.5.
  EXPECT_DOUBLE_EQ(hits_at_k(positive, negative, 2), 0.5);
  EXPECT_DOUBLE_EQ(hits_at_k(positive, negative, 1), 0.25);  // above 0.8: only 0.9
  EXPECT_DOUBLE_EQ(hits_at_k(positive, negative, 10), 1.0);  // fewer negatives than K
}

TEST(LinkMetrics, MrrRanksEachPositiveAmongTheNegatives) {
  const at::Tensor negative = at::tensor({0.1, 0.4, 0.8});
  // 0.9 -> rank 1; 0.5 -> rank 2 (0.8 above); 0.4 -> rank 3 (0.8 and the tie 0.4 count above).
  const at::Tensor positive = at::tensor({0.9, 0.5, 0.4});
  EXPECT_DOUBLE_EQ(mean_reciprocal_rank(positive, negative), (1.0 + 0.5 + 1.0 / 3) / 3);
}

}  // namespace
}  // namespace graphloom::train
