// Layer-wise full-neighbor inference (DGL's `inference()`): every node's output computed one
// layer at a time, in batches, so that memory stays bounded by one layer's activations.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::nn {
class GnnModel;
}  // namespace graphloom::nn

namespace graphloom::train {

// The model's input rows (float32 [ids.numel(), in]) of the given node ids: decoded features, or
// learnable embeddings pulled from their owners.
using RowReader = std::function<at::Tensor(const at::Tensor& ids)>;

// Where one layer's output [num_nodes, dim] lives while the next layer reads it: each rank
// writes the rows it computed, then `finish` (collective: a barrier, an allreduce) makes every
// row readable by every rank.
struct LayerOutput {
  std::function<void(int64_t first_node, const at::Tensor& rows)> write;
  std::function<void()> finish;
  RowReader read;
};
// Makes the output of layer `layer` with `dim` columns: e.g. a DistTensor on the graph servers,
// so that no trainer holds a whole layer.
using LayerOutputFactory = std::function<LayerOutput(int64_t layer, int64_t dim)>;

// The model's output for every node, in eval mode and without gradients, as a reader of the
// last layer's rows. The first layer reads its inputs through `inputs`; the others read the
// previous layer's output. With a process group each rank computes a contiguous share of the
// nodes of every layer. Collective: every rank calls it with the same arguments. Chunks of
// `batch_size` destinations that run out of device memory are retried at half the size (and
// the smaller size kept); a single destination that does not fit throws graphloom::Error
// saying what to lower.
RowReader layerwise_inference(nn::GnnModel& model, const sampling::NeighborSource& source,
                              const RowReader& inputs, int64_t batch_size, bool show_progress,
                              distributed::ProcessGroup* group, const LayerOutputFactory& outputs);

// The same into tensors of this process, returning the last [num_nodes, output_dim(last)]:
// with a process group, a shared-memory tensor when the ranks share a machine (a barrier
// between layers), otherwise a sum-allreduce of the disjoint shares. Every rank gets the same
// result.
at::Tensor layerwise_inference(nn::GnnModel& model, const sampling::NeighborSource& source,
                               const RowReader& inputs, int64_t batch_size,
                               bool show_progress = false,
                               distributed::ProcessGroup* group = nullptr);
// The same with every node's input row in memory: `features` [num_nodes, in].
at::Tensor layerwise_inference(nn::GnnModel& model, const sampling::NeighborSource& source,
                               const at::Tensor& features, int64_t batch_size,
                               bool show_progress = false,
                               distributed::ProcessGroup* group = nullptr);

}  // namespace graphloom::train
