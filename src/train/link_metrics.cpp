// Rank-based metrics with one sort of the negatives: each positive's position among them is a
// binary search.
#include "graphloom/train/link_metrics.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "graphloom/base/error.h"

namespace graphloom::train {
namespace {

std::vector<double> sorted_scores(const at::Tensor& scores) {
  const at::Tensor values = scores.to(at::kDouble).contiguous().view({-1});
  std::vector<double> out(values.data_ptr<double>(), values.data_ptr<double>() + values.numel());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<double> scores_of(const at::Tensor& scores) {
  const at::Tensor values = scores.to(at::kDouble).contiguous().view({-1});
  return {values.data_ptr<double>(), values.data_ptr<double>() + values.numel()};
}

}  // namespace

double roc_auc(const at::Tensor& positive, const at::Tensor& negative) {
  GL_CHECK(positive.numel() > 0 && negative.numel() > 0,
           "AUC needs positive and negative scores ({} and {} given)", positive.numel(),
           negative.numel());
  const std::vector<double> negatives = sorted_scores(negative);
  double wins = 0;
  for (const double score : scores_of(positive)) {
    const auto below = std::lower_bound(negatives.begin(), negatives.end(), score);
    const auto not_above = std::upper_bound(negatives.begin(), negatives.end(), score);
    wins += static_cast<double>(below - negatives.begin()) +
            0.5 * static_cast<double>(not_above - below);
  }
  return wins / (static_cast<double>(positive.numel()) * static_cast<double>(negatives.size()));
}

double hits_at_k(const at::Tensor& positive, const at::Tensor& negative, int64_t k) {
  GL_CHECK(k >= 1 && positive.numel() > 0, "Hits@K needs k >= 1 and positives");
  const std::vector<double> negatives = sorted_scores(negative);
  if (static_cast<int64_t>(negatives.size()) < k) return 1.0;
  const double threshold = negatives[negatives.size() - static_cast<std::size_t>(k)];
  int64_t hits = 0;
  for (const double score : scores_of(positive)) hits += score > threshold;
  return static_cast<double>(hits) / static_cast<double>(positive.numel());
}

double mean_reciprocal_rank(const at::Tensor& positive, const at::Tensor& negative) {
  GL_CHECK(positive.numel() > 0, "MRR needs positives");
  const std::vector<double> negatives = sorted_scores(negative);
  double sum = 0;
  for (const double score : scores_of(positive)) {
    // Negatives scoring at least as high as the positive rank above it.
    const auto not_below =
        negatives.end() - std::lower_bound(negatives.begin(), negatives.end(), score);
    sum += 1.0 / static_cast<double>(1 + not_below);
  }
  return sum / static_cast<double>(positive.numel());
}

RankingMetrics ranking_at_k(const at::Tensor& scores,
                            const std::vector<std::vector<int64_t>>& relevant,
                            const std::vector<std::vector<int64_t>>& excluded, int64_t k) {
  GL_CHECK(scores.dim() == 2 && static_cast<std::size_t>(scores.size(0)) == relevant.size() &&
               relevant.size() == excluded.size() && k >= 1,
           "ranking needs scores [Q, N] with Q relevant and excluded lists and k >= 1");
  const int64_t n = scores.size(1);
  at::Tensor masked = at::empty(scores.sizes(), at::kDouble).copy_(scores);
  double* row_scores = masked.data_ptr<double>();
  for (std::size_t q = 0; q < excluded.size(); ++q) {
    for (const int64_t candidate : excluded[q]) {
      GL_CHECK(candidate >= 0 && candidate < n, "excluded candidate {} is outside [0, {})",
               candidate, n);
      row_scores[static_cast<int64_t>(q) * n + candidate] =
          -std::numeric_limits<double>::infinity();
    }
  }
  const int64_t depth = std::min<int64_t>(k, n);
  const at::Tensor top = std::get<1>(masked.topk(depth, /*dim=*/1)).contiguous();
  RankingMetrics metrics;
  for (std::size_t q = 0; q < relevant.size(); ++q) {
    if (relevant[q].empty()) continue;
    std::vector<int64_t> wanted = relevant[q];
    std::sort(wanted.begin(), wanted.end());
    const int64_t* ranked = top.data_ptr<int64_t>() + q * depth;
    int64_t hits = 0;
    double precision_sum = 0;
    for (int64_t i = 0; i < depth; ++i) {
      if (!std::binary_search(wanted.begin(), wanted.end(), ranked[i])) continue;
      ++hits;
      precision_sum += static_cast<double>(hits) / static_cast<double>(i + 1);
    }
    const auto count = static_cast<double>(wanted.size());
    metrics.recall += static_cast<double>(hits) / count;
    metrics.map += precision_sum / std::min<double>(count, static_cast<double>(k));
    ++metrics.queries;
  }
  if (metrics.queries > 0) {
    metrics.recall /= static_cast<double>(metrics.queries);
    metrics.map /= static_cast<double>(metrics.queries);
  }
  return metrics;
}

}  // namespace graphloom::train
