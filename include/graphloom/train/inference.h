// Layer-wise full-neighbor inference (DGL's `inference()`): every node's output computed one
// layer at a time, in batches, so that memory stays bounded by one layer's activations.
#pragma once

#include <ATen/core/Tensor.h>

#include "graphloom/nn/models.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::train {

// Returns the model's output for every node [num_nodes, output_dim(last)], in eval mode and
// without gradients. `features`: [num_nodes, in].
at::Tensor layerwise_inference(nn::GnnModel& model, const sampling::NeighborSource& source,
                               const at::Tensor& features, int64_t batch_size,
                               bool show_progress = false);

}  // namespace graphloom::train
