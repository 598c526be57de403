// Recency weights of training pairs and the popularity prior of destinations.
#include "graphloom/train/link_priors.h"

#include <ATen/ATen.h>

#include "graphloom/base/error.h"

namespace graphloom::train {

at::Tensor recency_weights(const TrainingInputs& inputs, double half_life_days) {
  if (half_life_days == 0) return {};
  if (half_life_days < 0) {
    throw OptionError("recency_half_life_days",
                      fmt::format("must be positive (days), got {}", half_life_days));
  }
  const auto timed = inputs.edge_split_times.find("train");
  if (timed == inputs.edge_split_times.end()) {
    throw OptionError("recency_half_life_days",
                      fmt::format("needs the time of every training pair, which '{}' does not "
                                  "have (a MovieLens import has them, and so do its partitions)",
                                  inputs.name));
  }
  const at::Tensor& times = timed->second;
  const auto found = inputs.edge_splits.find("train");
  GL_CHECK(found != inputs.edge_splits.end(), "'{}' has no 'train' edge split", inputs.name);
  const at::Tensor& train = found->second;
  GL_CHECK(times.numel() == train.size(0), "'{}': {} training pair times for {} training pairs",
           inputs.name, times.numel(), train.size(0));
  if (times.numel() == 0) return {};
  constexpr double kSecondsPerDay = 86400;
  const at::Tensor age_days = (times.max() - times).to(at::kDouble) / kSecondsPerDay;
  return at::exp2(-age_days / half_life_days);
}

at::Tensor pair_weight_totals(const at::Tensor& pairs, const at::Tensor& weights, int64_t num_nodes,
                              bool symmetric) {
  const int64_t m = pairs.size(0);
  GL_CHECK(!weights.defined() || weights.numel() == m, "{} pair weights for {} training pairs",
           weights.numel(), m);
  const at::Tensor weight =
      weights.defined() ? weights.to(at::kDouble) : at::ones({m}, at::kDouble);
  at::Tensor total = at::zeros({num_nodes}, at::kDouble);
  total.index_add_(0, pairs.select(1, 1), weight);
  if (symmetric) total.index_add_(0, pairs.select(1, 0), weight);
  return total;
}

at::Tensor popularity_prior(const at::Tensor& train_pairs, const at::Tensor& weights,
                            int64_t num_nodes, bool symmetric) {
  return at::log1p(pair_weight_totals(train_pairs, weights, num_nodes, symmetric)).to(at::kFloat);
}

}  // namespace graphloom::train
