// [destination rows | aggregated neighbors] in one tensor, so that GraphSAGE applies its two
// weights as one GEMM with twice the inner dimension: on the first layer of a sampled batch
// (~100k rows) that took ~10% less time than two GEMMs summed into one output, and x gets one
// gradient tensor instead of the zero-filled full-size one that slicing it would add.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

#include "aggregate_kernels.h"
#include "graphloom/base/error.h"
#include "graphloom/nn/sparse_ops.h"
#include "tensor_sparse_ops.h"

namespace graphloom::nn {
namespace {

using namespace kernels;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// out row i (of `out_stride`) = x row rows[i], or row i when `rows` is null.
template <typename T>
void copy_rows(const T* x, const int64_t* rows, int64_t count, int64_t feats, T* out,
               int64_t out_stride) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    std::copy_n(x + (rows != nullptr ? rows[i] : i) * feats, feats, out + i * out_stride);
  }
}

class SelfAndNeighborsFunction : public torch::autograd::Function<SelfAndNeighborsFunction> {
 public:
  // x: contiguous [rows, F]; dst_rows: x's rows of the destinations, or empty for its first
  // num_dst rows; the block's sources are rows of x.
  // weight: the mean's edge weights [E, 1], or empty.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& dst_rows,
                            const at::Tensor& weight, const at::Tensor& indptr,
                            const at::Tensor& indices, int64_t num_src, int64_t reduce_code) {
    const BlockView block{indptr, indices, num_src};
    const int64_t feats = x.size(1);
    at::Tensor out = at::empty({block.num_dst(), 2 * feats}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "self_and_neighbors", [&] {
      scalar_t* o = out.data_ptr<scalar_t>();
      copy_rows(x.data_ptr<scalar_t>(),
                dst_rows.numel() > 0 ? dst_rows.data_ptr<int64_t>() : nullptr, block.num_dst(),
                feats, o, 2 * feats);
      const Coefficient<scalar_t> coef{weight.numel() > 0 ? weight.data_ptr<scalar_t>() : nullptr,
                                       indptr.data_ptr<int64_t>(), 1,
                                       static_cast<Reduce>(reduce_code) == Reduce::kMean};
      sum_forward(block, x.data_ptr<scalar_t>(), coef, 1, feats, o + feats, 2 * feats);
    });
    ctx->save_for_backward({dst_rows, indptr, indices, weight});
    ctx->saved_data["num_src"] = num_src;
    ctx->saved_data["reduce"] = reduce_code;
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& dst_rows = saved[0];
    const BlockView block{saved[1], saved[2], ctx->saved_data["num_src"].toInt()};
    const at::Tensor& weight = saved[3];
    const at::Tensor grad = grad_outputs[0].contiguous();
    const int64_t feats = grad.size(1) / 2;
    at::Tensor grad_x = at::empty({block.num_src, feats}, grad.options());
    AT_DISPATCH_FLOATING_TYPES(grad.scalar_type(), "self_and_neighbors_backward", [&] {
      const Coefficient<scalar_t> coef{
          weight.numel() > 0 ? weight.data_ptr<scalar_t>() : nullptr,
          block.indptr.data_ptr<int64_t>(), 1,
          static_cast<Reduce>(ctx->saved_data["reduce"].toInt()) == Reduce::kMean};
      sum_backward_x(block, transpose(block), grad.data_ptr<scalar_t>() + feats, 2 * feats, coef, 1,
                     feats, grad_x.data_ptr<scalar_t>());
    });
    const at::Tensor grad_self = grad.narrow(1, 0, feats);
    if (dst_rows.numel() > 0) {
      grad_x.index_add_(0, dst_rows, grad_self);
    } else {
      grad_x.narrow(0, 0, block.num_dst()).add_(grad_self);
    }
    return {grad_x, {}, {}, {}, {}, {}, {}};
  }
};

}  // namespace

at::Tensor self_and_neighbors(const BlockView& block, const at::Tensor& input, Reduce reduce) {
  GL_CHECK(reduce != Reduce::kMax, "self_and_neighbors: sum or mean only");
  const at::Tensor x = full_precision(input).contiguous();
  const bool table = block.source_rows.defined();
  GL_CHECK(x.dim() == 2 && x.is_floating_point() && (table || x.size(0) == block.num_src),
           "self_and_neighbors: x must be a float tensor [num_src = {}, F], got {}", block.num_src,
           x.sizes());
  if (!use_native_kernels(x)) return tensor_ops::self_and_neighbors(block, x, reduce);
  const BlockView edges = table ? block.over_table(x.size(0)) : block;
  const at::Tensor dst_rows = table ? block.source_rows.slice(0, 0, block.num_dst()).contiguous()
                                    : at::empty({0}, at::kLong);
  const at::Tensor weight = mean_weights(block, reduce, 1, x.options());
  return SelfAndNeighborsFunction::apply(x, dst_rows, weight, edges.indptr, edges.indices,
                                         edges.num_src, static_cast<int64_t>(reduce));
}

}  // namespace graphloom::nn
