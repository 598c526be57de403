// Link-prediction metrics from the scores of positive pairs against negative pairs (higher =
// more likely an edge), as OGB's evaluators and scikit-learn's roc_auc_score compute them.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace graphloom::train {

// Probability that a random positive outscores a random negative (ties count one half).
double roc_auc(const at::Tensor& positive, const at::Tensor& negative);

// Share of positives scoring above the k-th highest negative (OGB's Hits@K with shared
// negatives); 1 when there are fewer than k negatives.
double hits_at_k(const at::Tensor& positive, const at::Tensor& negative, int64_t k);

// Mean over positives of 1 / rank among the negatives (rank 1 = above every negative;
// ties count against the positive, as OGB's optimistic/pessimistic mean).
double mean_reciprocal_rank(const at::Tensor& positive, const at::Tensor& negative);

// Full-ranking metrics (recommendation style): every candidate is ranked for each query.
struct RankingMetrics {
  double recall = 0;  // mean over queries of |top-K ∩ relevant| / |relevant|
  double map = 0;     // mean over queries of AP@K = sum over hits at rank i of precision@i,
                      // divided by min(|relevant|, K)
  int64_t queries = 0;
};

// `scores` [Q, N]: query q's score for every candidate. `relevant[q]` are its held-out
// positives; `excluded[q]` (e.g. its training positives, itself) are removed from the ranking.
// Queries without relevant candidates are skipped.
RankingMetrics ranking_at_k(const at::Tensor& scores,
                            const std::vector<std::vector<int64_t>>& relevant,
                            const std::vector<std::vector<int64_t>>& excluded, int64_t k);

}  // namespace graphloom::train
