// The device path of message passing (tensor_sparse_ops.h): gathers by index_select, sums by
// index_add, maxima by scatter_reduce, all of which run (and differentiate) on every device.
#include "tensor_sparse_ops.h"

#include <ATen/ATen.h>

#include <optional>

namespace graphloom::nn::tensor_ops {

at::Tensor edge_destinations(const BlockView& block) {
  // The output size given: no device-to-host sync to learn it.
  return at::repeat_interleave(in_degrees(block), std::optional<int64_t>(block.num_edges()));
}

at::Tensor aggregate(const BlockView& block, const at::Tensor& x, Reduce reduce,
                     const at::Tensor& weight) {
  const at::Tensor dst = edge_destinations(block);
  at::Tensor messages = x.index_select(0, block.indices);
  if (weight.numel() > 0) messages = messages * weight.unsqueeze(-1);
  const at::Tensor zeros = at::zeros({block.num_dst(), x.size(1), x.size(2)}, x.options());
  if (reduce == Reduce::kMax) {
    // Destinations without edges keep the zeros, as the native kernel gives them.
    return zeros.scatter_reduce(0, dst.view({-1, 1, 1}).expand_as(messages), messages, "amax",
                                /*include_self=*/false);
  }
  const at::Tensor sum = zeros.index_add(0, dst, messages);
  if (reduce == Reduce::kSum) return sum;
  const at::Tensor degree = in_degrees(block).clamp_min(1).to(x.scalar_type());
  return sum / degree.view({-1, 1, 1});
}

at::Tensor self_and_neighbors(const BlockView& block, const at::Tensor& x, Reduce reduce) {
  const bool table = block.source_rows.defined();
  const BlockView edges = table ? block.over_table(x.size(0)) : block;
  const at::Tensor weight = mean_weights(block, reduce, 1, x.options());
  const at::Tensor neighbors =
      tensor_ops::aggregate(edges, x.unsqueeze(1), reduce, weight).squeeze(1);
  return at::cat({destination_rows(block, x), neighbors}, 1);
}

at::Tensor edge_add(const BlockView& block, const at::Tensor& a, const at::Tensor& b) {
  return a.index_select(0, block.indices) + b.index_select(0, edge_destinations(block));
}

at::Tensor edge_softmax(const BlockView& block, const at::Tensor& scores) {
  const at::Tensor dst = edge_destinations(block);
  const at::Tensor index = dst.view({-1, 1}).expand_as(scores);
  const at::Tensor zeros = at::zeros({block.num_dst(), scores.size(1)}, scores.options());
  // Any shift per destination gives the same softmax; the maximum keeps exp in range. It
  // carries no gradient (the softmax does not depend on it).
  const at::Tensor shift =
      zeros.scatter_reduce(0, index, scores.detach(), "amax", /*include_self=*/false);
  const at::Tensor exp = (scores - shift.index_select(0, dst)).exp();
  const at::Tensor total = zeros.index_add(0, dst, exp);
  return exp / total.index_select(0, dst);
}

}  // namespace graphloom::nn::tensor_ops
