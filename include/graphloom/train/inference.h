// Layer-wise full-neighbor inference (DGL's `inference()`): every node's output computed one
// layer at a time, in batches, so that memory stays bounded by one layer's activations.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "graphloom/dist/process_group.h"
#include "graphloom/nn/models.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::train {

// The model's input rows (float32 [ids.numel(), in]) of the given node ids: decoded features, or
// learnable embeddings pulled from their owners.
using RowReader = std::function<at::Tensor(const at::Tensor& ids)>;

// Returns the model's output for every node [num_nodes, output_dim(last)], in eval mode and
// without gradients. The first layer reads its inputs through `inputs`; the others read the
// previous layer's output.
//
// With a process group, each rank computes its share of the nodes of every layer into one
// output that all ranks see: a shared-memory tensor when they share a machine (a barrier
// between layers), otherwise a sum-allreduce of the disjoint shares. Collective: every rank
// calls it with the same arguments and gets the same result.
at::Tensor layerwise_inference(nn::GnnModel& model, const sampling::NeighborSource& source,
                               const RowReader& inputs, int64_t batch_size,
                               bool show_progress = false, dist::ProcessGroup* group = nullptr);
// The same with every node's input row in memory: `features` [num_nodes, in].
at::Tensor layerwise_inference(nn::GnnModel& model, const sampling::NeighborSource& source,
                               const at::Tensor& features, int64_t batch_size,
                               bool show_progress = false, dist::ProcessGroup* group = nullptr);

}  // namespace graphloom::train
