// Temporal link prediction's pair times and its evaluation (temporal_link.h).
#include "temporal_link.h"

#include <ATen/ATen.h>

#include <limits>

#include "graphloom/base/error.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/sampling/item_sampler.h"
#include "graphloom/train/gradient_sync.h"

namespace graphloom::train {

at::Tensor sampled_before(const at::Tensor& times) {
  // The earliest time stays itself: one before it would wrap around.
  return at::where(times > std::numeric_limits<int64_t>::min(), times - 1, times);
}

at::Tensor split_times(const TrainingInputs& inputs, const std::string& name) {
  const auto pairs = inputs.edge_splits.find(name);
  GL_CHECK(pairs != inputs.edge_splits.end(), "'{}' has no '{}' edge split", inputs.name, name);
  const int64_t count = pairs->second.size(0);
  const auto own = inputs.edge_split_times.find(name);
  if (own != inputs.edge_split_times.end()) {
    GL_CHECK(own->second.numel() == count, "'{}': {} times for the {} pairs of edge split '{}'",
             inputs.name, own->second.numel(), count, name);
    return own->second;
  }
  const std::string suffix = "_neg";
  const bool negatives = name.size() > suffix.size() && name.ends_with(suffix);
  if (negatives) {
    const std::string positives = name.substr(0, name.size() - suffix.size());
    const auto positive_times = inputs.edge_split_times.find(positives);
    const auto positive_pairs = inputs.edge_splits.find(positives);
    if (positive_times != inputs.edge_split_times.end() &&
        positive_pairs != inputs.edge_splits.end() && positive_pairs->second.size(0) == count &&
        positive_times->second.numel() == count) {
      return positive_times->second;
    }
  }
  throw OptionError(
      "temporal",
      fmt::format("samples each pair at its time, and '{}' has no times for its '{}' pairs "
                  "(edge_split_times){}",
                  inputs.name, name,
                  negatives ? ", nor one negative per timed positive to take the time of" : ""));
}

at::Tensor scores_at_pair_times(const at::Tensor& pairs, const at::Tensor& times,
                                const PairScoring& scoring, const BatchScorer& score) {
  const int64_t count = pairs.size(0);
  GL_CHECK(pairs.dim() == 2 && pairs.size(1) == 2 && times.numel() == count,
           "scores_at_pair_times: [M, 2] pairs with M times, got [{}] and {} times",
           fmt::join(pairs.sizes(), ", "), times.numel());
  const bool parallel = data_parallel(scoring.group);
  // (src, dst, id, time) items: the id brings each score back to its pair's row.
  const sampling::ItemSampler items(
      at::cat({pairs.to(at::kLong), at::arange(count, at::kLong).unsqueeze(1),
               sampled_before(times.to(at::kLong)).unsqueeze(1)},
              1),
      {.batch_size = scoring.batch_size,
       .rank = parallel ? scoring.group->rank() : 0,
       .world_size = parallel ? scoring.group->world_size() : 1});
  loader::DataLoader loader(loader::Pipeline{.items = &items,
                                             .pairs = true,
                                             .timed_items = true,
                                             .neighbors = scoring.sampler,
                                             .features = scoring.features},
                            loader::DataLoaderOptions{.num_workers = scoring.num_workers,
                                                      .prefetch = scoring.prefetch,
                                                      .feature_names = scoring.feature_names,
                                                      .label_name = ""});
  at::Tensor scores = at::zeros({count}, at::kFloat);
  // One fixed epoch: every evaluation samples the same blocks.
  loader.start_epoch(~0ULL);
  while (std::optional<sampling::MiniBatch> batch = loader.next()) {
    scores.index_put_({batch->pairs.input_id}, score(*batch).to(at::kFloat));
  }
  if (parallel) scoring.group->allreduce(scores);
  return scores;
}

}  // namespace graphloom::train
