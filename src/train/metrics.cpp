// Accuracy, macro-F1 and the ROC-AUC of two-class logits.
#include "graphloom/train/metrics.h"

#include <ATen/ATen.h>

#include "graphloom/train/link_metrics.h"

namespace graphloom::train {

double accuracy(const at::Tensor& logits, const at::Tensor& labels) {
  const at::Tensor labeled = labels >= 0;
  const int64_t count = labeled.sum().item<int64_t>();
  if (count == 0) return 0.0;
  const at::Tensor correct = (logits.argmax(1) == labels).logical_and(labeled);
  return static_cast<double>(correct.sum().item<int64_t>()) / static_cast<double>(count);
}

double macro_f1(const at::Tensor& logits, const at::Tensor& labels, int64_t num_classes) {
  const at::Tensor labeled = labels >= 0;
  const at::Tensor truth = labels.masked_select(labeled);
  const at::Tensor predicted = logits.argmax(1).masked_select(labeled);
  const at::Tensor hit = predicted == truth;
  const at::Tensor true_positive = at::bincount(truth.masked_select(hit), {}, num_classes);
  const at::Tensor actual = at::bincount(truth, {}, num_classes);
  const at::Tensor guessed = at::bincount(predicted, {}, num_classes);
  double total = 0;
  int64_t classes = 0;
  for (int64_t c = 0; c < num_classes; ++c) {
    const auto tp = true_positive[c].item<int64_t>();
    const auto denominator = actual[c].item<int64_t>() + guessed[c].item<int64_t>();
    if (denominator == 0) continue;
    total += 2.0 * static_cast<double>(tp) / static_cast<double>(denominator);
    ++classes;
  }
  return classes > 0 ? total / static_cast<double>(classes) : 0.0;
}

double binary_roc_auc(const at::Tensor& logits, const at::Tensor& labels) {
  const at::Tensor score = logits.select(1, 1) - logits.select(1, 0);
  const at::Tensor positive = score.masked_select(labels == 1);
  const at::Tensor negative = score.masked_select(labels == 0);
  if (positive.numel() == 0 || negative.numel() == 0) return -1;
  return roc_auc(positive, negative);
}

}  // namespace graphloom::train
