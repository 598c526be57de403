// What link prediction knows before it learns: how recent each training pair is, and how
// popular each destination is. Time-aware training draws pairs by recency; the popularity prior
// enters every score (LinkOptions::recency_half_life_days, popularity_prior).
#pragma once

#include <ATen/core/Tensor.h>

#include "graphloom/train/link_prediction.h"

namespace graphloom::train {

// The training pairs' weights for `half_life_days`: 2^(-age / half-life), 1 for the latest
// pair; undefined when `half_life_days` is 0. Needs inputs.edge_split_times["train"] for all
// of edge_splits["train"].
at::Tensor recency_weights(const TrainingInputs& inputs, double half_life_days);

// double [num_nodes]: the summed weight of the pairs each node is the destination of, or
// either endpoint of when `symmetric`; weights undefined count 1 each (popularity).
at::Tensor pair_weight_totals(const at::Tensor& pairs, const at::Tensor& weights, int64_t num_nodes,
                              bool symmetric);

// float [num_nodes]: log(1 + pair_weight_totals of the training pairs).
at::Tensor popularity_prior(const at::Tensor& train_pairs, const at::Tensor& weights,
                            int64_t num_nodes, bool symmetric);

}  // namespace graphloom::train
