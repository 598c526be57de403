// Temporal link prediction (PyG's LinkNeighborLoader(time_attr=..., edge_label_time=...)),
// internal to the link-prediction task: a pair at time t is encoded from blocks sampled just
// before t, at every hop, so that neither the pair's own edge nor anything later reaches it,
// in training and in evaluation alike.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>

#include "graphloom/loader/data_loader.h"
#include "graphloom/train/training_inputs.h"

namespace graphloom::train {

// The time pairs are sampled at: one before their own, so that edges of time t (the pair's own
// among them) are not yet usable.
at::Tensor sampled_before(const at::Tensor& times);

// The int64 [M] times of edge split `name`'s M pairs: its own (TrainingInputs::edge_split_times),
// or for a negative split without times ("valid_neg", "test_neg") those of its positives when
// it has one negative per positive, in their order (as the MovieLens import draws them).
// Throws OptionError("temporal") naming the split when neither holds.
at::Tensor split_times(const TrainingInputs& inputs, const std::string& name);

// What scores_at_pair_times runs its batches through.
struct PairScoring {
  const sampling::NeighborSampler* sampler = nullptr;
  const features::FeatureSource* features = nullptr;
  std::vector<std::string> feature_names;  // rows the loader gathers into each batch
  int64_t batch_size = 1024;               // pairs per batch
  int num_workers = 1;
  int prefetch = 1;
  distributed::ProcessGroup* group = nullptr;  // data-parallel: each rank scores a share
};

// Scores of one host batch of pairs (MiniBatch::pairs), float [num_pairs] on the host.
using BatchScorer = std::function<at::Tensor(const sampling::MiniBatch& host_batch)>;

// Scores of `pairs` [M, 2], each pair's endpoints sampled at sampled_before(times) (the
// loader's timed pair stage, the pairs in order). With a data-parallel group each rank scores
// its share and the shares are summed into the whole on every rank (collective).
at::Tensor scores_at_pair_times(const at::Tensor& pairs, const at::Tensor& times,
                                const PairScoring& scoring, const BatchScorer& score);

}  // namespace graphloom::train
