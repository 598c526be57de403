// Classification metrics over logits; labels of -1 (unlabeled) are ignored.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace graphloom::train {

double accuracy(const at::Tensor& logits, const at::Tensor& labels);

// Unweighted mean over classes of per-class F1 (classes absent from both labels and
// predictions are skipped, as scikit-learn's f1_score(average="macro") with zero_division=0
// would count them as 0 only when predicted or present).
double macro_f1(const at::Tensor& logits, const at::Tensor& labels, int64_t num_classes);

// Two classes: ROC-AUC of the score logit[1] - logit[0] against the labels (the metric of
// imbalanced binary graphs such as Tolokers, where accuracy is near the majority rate).
// -1 when a class has no labeled node.
double binary_roc_auc(const at::Tensor& logits, const at::Tensor& labels);

}  // namespace graphloom::train
