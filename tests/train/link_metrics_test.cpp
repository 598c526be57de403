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

TEST(LinkMetrics, FullRankingRecallAndMapAtK) {
  // Query 0 ranks 3 > 1 > 2 > 0 once candidate 4 (its training positive) is excluded; its
  // held-out positives are 1 and 2: top-2 = {3, 1} -> recall 1/2, AP@2 = (1/2) / 2.
  // Query 1 ranks 0 first, its positive: recall 1, AP 1. Query 2 has none and is skipped.
  const at::Tensor scores = at::tensor({0.1, 0.5, 0.3, 0.9, 1.0,  //
                                        0.9, 0.1, 0.2, 0.3, 0.4,  //
                                        0.5, 0.5, 0.5, 0.5, 0.5},
                                       at::kDouble)
                                .view({3, 5});
  const RankingMetrics metrics = ranking_at_k(scores, {{1, 2}, {0}, {}}, {{4}, {}, {}}, 2);
  EXPECT_EQ(metrics.queries, 2);
  EXPECT_DOUBLE_EQ(metrics.recall, (0.5 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(metrics.map, (0.25 + 1.0) / 2);
}

}  // namespace
}  // namespace graphloom::train
