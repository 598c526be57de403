// Accuracy, macro-F1 and binary ROC-AUC on hand-computed examples.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "graphloom/train/metrics.h"

namespace graphloom::train {
namespace {

torch::Tensor one_hot_logits(std::vector<int64_t> predicted, int64_t classes) {
  return torch::one_hot(torch::tensor(predicted), classes).to(torch::kFloat);
}

TEST(Metrics, AccuracyIgnoresUnlabeled) {
  const torch::Tensor logits = one_hot_logits({0, 1, 2, 2}, 3);
  EXPECT_DOUBLE_EQ(accuracy(logits, torch::tensor({0, 1, 1, -1})), 2.0 / 3);
}

TEST(Metrics, MacroF1) {
  // truth 0 0 1 1 2, predicted 0 1 1 1 2: F1 per class 2/3, 4/5, 1.
  const torch::Tensor logits = one_hot_logits({0, 1, 1, 1, 2}, 3);
  EXPECT_NEAR(macro_f1(logits, torch::tensor({0, 0, 1, 1, 2}), 3), (2.0 / 3 + 0.8 + 1.0) / 3,
              1e-12);
}

TEST(Metrics, BinaryRocAucRanksTheScoreDifference) {
  // Scores logit1 - logit0: 0.9, 0.1, 0.5, -0.4 for labels 1, 0, 1, 0 and an unlabeled 5.0.
  // Positives 0.9 and 0.5 each beat both negatives: AUC 1. Swapping two labels makes the
  // positive 0.1 lose to the negative 0.5: 3 of 4 pairs.
  const torch::Tensor logits =
      torch::tensor({{0.0, 0.9}, {0.0, 0.1}, {0.0, 0.5}, {0.4, 0.0}, {0.0, 5.0}});
  EXPECT_DOUBLE_EQ(binary_roc_auc(logits, torch::tensor({1, 0, 1, 0, -1})), 1.0);
  EXPECT_DOUBLE_EQ(binary_roc_auc(logits, torch::tensor({1, 1, 0, 0, -1})), 0.75);
  EXPECT_DOUBLE_EQ(binary_roc_auc(logits, torch::tensor({1, 1, 1, 1, -1})), -1.0);
}

}  // namespace
}  // namespace graphloom::train
