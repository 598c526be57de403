// ItemSampler: splits an item set (seed nodes or edges) into mini-batches for one rank, with
// the semantics of GraphBolt's ItemSampler / DistributedItemSampler.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace graphloom::sampling {

struct ItemSamplerOptions {
  int64_t batch_size = 1024;
  bool shuffle = false;
  bool drop_last = false;
  int64_t rank = 0;
  int64_t world_size = 1;
  // Every rank yields the same number of batches (the fewest any rank has), so data-parallel
  // training never waits on a rank that ran out.
  bool drop_uneven_inputs = false;
  uint64_t seed = 0;
  // Optional float/double [num_items], >= 0 with a positive sum (PyTorch's
  // WeightedRandomSampler): each epoch then draws num_items items with replacement, item i with
  // probability weights[i] / sum, whatever `shuffle` says. All ranks draw the same sequence and
  // take disjoint shares of its positions (an item drawn twice may reach two ranks).
  at::Tensor weights;
};

class ItemSampler {
 public:
  // `items`: [num_items] or [num_items, k] (rows are items, e.g. node pairs).
  ItemSampler(at::Tensor items, ItemSamplerOptions options);

  // The batches of this rank in `epoch`. With shuffle, all ranks permute all items with the
  // same (seed + epoch) permutation and then take their own contiguous share, so ranks stay
  // disjoint and the split changes every epoch (with weights, shares of the epoch's draw).
  std::vector<at::Tensor> batches(uint64_t epoch) const;
  int64_t num_batches() const;
  // Items this rank yields per epoch.
  int64_t num_items_out() const { return output_count_; }
  const ItemSamplerOptions& options() const { return options_; }

 private:
  // Item positions of one epoch, before the rank's share is taken: a permutation, or the
  // weighted draw.
  at::Tensor epoch_order(uint64_t epoch) const;

  at::Tensor items_;
  ItemSamplerOptions options_;
  std::vector<double> cumulative_weights_;  // running sums of options_.weights
  int64_t start_offset_ = 0;
  int64_t assigned_count_ = 0;
  int64_t output_count_ = 0;
};

}  // namespace graphloom::sampling
