// Message passing over a BlockView in plain ATen tensor ops (internal to the nn module): the
// path sparse_ops.h takes for tensors on a device other than the CPU, where the native kernels
// do not run. ATen's autograd differentiates it; on the CPU it is tested against the kernels.
#pragma once

#include <ATen/core/Tensor.h>

#include "graphloom/nn/sparse_ops.h"

namespace graphloom::nn::tensor_ops {

// int64 [num_edges]: the destination of each edge.
at::Tensor edge_destinations(const BlockView& block);

// aggregate() on x [num_src, H, F] with weights [E, H] (or an empty tensor): [num_dst, H, F].
at::Tensor aggregate(const BlockView& block, const at::Tensor& x, Reduce reduce,
                     const at::Tensor& weight);
// self_and_neighbors() on x [num_src, F] (or the table, with block.source_rows).
at::Tensor self_and_neighbors(const BlockView& block, const at::Tensor& x, Reduce reduce);
at::Tensor edge_add(const BlockView& block, const at::Tensor& a, const at::Tensor& b);
at::Tensor edge_softmax(const BlockView& block, const at::Tensor& scores);

}  // namespace graphloom::nn::tensor_ops
