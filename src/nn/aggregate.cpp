// Aggregation (SpMM over the block's CSC) as an autograd function with its exact backward.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "aggregate_kernels.h"
#include "graphloom/base/error.h"
#include "graphloom/nn/sparse_ops.h"
#include "tensor_sparse_ops.h"

namespace graphloom::nn {
namespace {

using namespace kernels;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

class AggregateFunction : public torch::autograd::Function<AggregateFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& indptr, const at::Tensor& indices, int64_t num_src,
                            int64_t reduce_code) {
    const BlockView block{indptr, indices, num_src};
    const auto reduce = static_cast<Reduce>(reduce_code);
    const int64_t heads = x.size(1);
    const int64_t feats = x.size(2);
    at::Tensor out = at::empty({block.num_dst(), heads, feats}, x.options());
    at::Tensor arg;
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "aggregate", [&] {
      const scalar_t* w = weight.numel() > 0 ? weight.data_ptr<scalar_t>() : nullptr;
      if (reduce == Reduce::kMax) {
        arg = at::empty({block.num_dst(), heads, feats}, at::kLong);
        max_forward(block, x.data_ptr<scalar_t>(), heads * feats, out.data_ptr<scalar_t>(),
                    arg.data_ptr<int64_t>());
      } else {
        const Coefficient<scalar_t> coef{w, indptr.data_ptr<int64_t>(), heads,
                                         reduce == Reduce::kMean};
        sum_forward(block, x.data_ptr<scalar_t>(), coef, heads, feats, out.data_ptr<scalar_t>(),
                    heads * feats);
      }
    });
    // x itself is needed only for the weights' gradient: not keeping it otherwise lets a
    // layer's input (the largest activation) go as soon as the forward pass is done with it.
    ctx->save_for_backward(
        {weight.requires_grad() ? x : at::Tensor(), weight, indptr, indices, arg});
    ctx->saved_data["num_src"] = num_src;
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["feats"] = feats;
    ctx->saved_data["reduce"] = reduce_code;
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const BlockView block{saved[2], saved[3], ctx->saved_data["num_src"].toInt()};
    const auto reduce = static_cast<Reduce>(ctx->saved_data["reduce"].toInt());
    const at::Tensor grad_out = grad_outputs[0].contiguous();
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const int64_t feats = ctx->saved_data["feats"].toInt();
    const std::vector<int64_t> x_shape{block.num_src, heads, feats};
    at::Tensor grad_x;
    at::Tensor grad_weight;
    AT_DISPATCH_FLOATING_TYPES(grad_out.scalar_type(), "aggregate_backward", [&] {
      if (reduce == Reduce::kMax) {
        grad_x = at::zeros(x_shape, grad_out.options());
        max_backward(block.num_dst(), grad_out.data_ptr<scalar_t>(), saved[4].data_ptr<int64_t>(),
                     heads * feats, grad_x.data_ptr<scalar_t>());
        return;
      }
      const scalar_t* w = weight.numel() > 0 ? weight.data_ptr<scalar_t>() : nullptr;
      const Coefficient<scalar_t> coef{w, block.indptr.data_ptr<int64_t>(), heads,
                                       reduce == Reduce::kMean};
      if (ctx->needs_input_grad(0)) {
        grad_x = at::empty(x_shape, grad_out.options());
        sum_backward_x(block, transpose(block), grad_out.data_ptr<scalar_t>(), heads * feats, coef,
                       heads, feats, grad_x.data_ptr<scalar_t>());
      }
      if (w != nullptr && ctx->needs_input_grad(1)) {
        grad_weight = at::empty_like(weight);
        sum_backward_weight(block, x.data_ptr<scalar_t>(), grad_out.data_ptr<scalar_t>(), heads,
                            feats, grad_weight.data_ptr<scalar_t>());
      }
    });
    return {grad_x, grad_weight, {}, {}, {}, {}};
  }
};

}  // namespace

BlockView BlockView::over_table(int64_t table_rows) const {
  GL_CHECK(source_rows.defined() && source_rows.numel() == num_src,
           "over_table: the block needs source_rows for its {} sources", num_src);
  return {indptr,      source_rows.index_select(0, indices), table_rows, {}, edge_types, {},
          edge_weights};
}

at::Tensor mean_weights(const BlockView& block, Reduce reduce, int64_t heads,
                        const at::TensorOptions& options) {
  if (reduce != Reduce::kMean || !block.edge_weights.defined()) return at::empty({0}, options);
  GL_CHECK(block.edge_weights.numel() == block.num_edges(),
           "block edge_weights: expected {} values (one per edge), got {}", block.num_edges(),
           block.edge_weights.numel());
  // Constants of the batch: no gradient flows to them (the backward's weight gradient is the
  // sum's, not the mean's).
  return block.edge_weights.detach()
      .to(options.dtype().toScalarType())
      .view({-1, 1})
      .expand({-1, heads})
      .contiguous();
}

at::Tensor destination_rows(const BlockView& block, const at::Tensor& x) {
  return block.source_rows.defined()
             ? x.index_select(0, block.source_rows.slice(0, 0, block.num_dst()))
             : x.slice(0, 0, block.num_dst());
}

at::Tensor in_degrees(const BlockView& block) {
  return block.indptr.slice(0, 1) - block.indptr.slice(0, 0, -1);
}

at::Tensor out_degrees(const BlockView& block) {
  return at::bincount(block.indices, {}, block.num_src);
}

namespace {
thread_local bool generic_ops = false;
}  // namespace

bool use_native_kernels(const at::Tensor& x) { return x.is_cpu() && !generic_ops; }

GenericOpsScope::GenericOpsScope() : previous_(generic_ops) { generic_ops = true; }
GenericOpsScope::~GenericOpsScope() { generic_ops = previous_; }

at::Tensor full_precision(const at::Tensor& x) {
  const auto dtype = x.scalar_type();
  return dtype == at::kBFloat16 || dtype == at::kHalf ? x.to(at::kFloat) : x;
}

at::Tensor aggregate(const BlockView& block, const at::Tensor& input, Reduce reduce,
                     const at::Tensor& weight) {
  const at::Tensor x = full_precision(input);
  GL_CHECK(x.is_floating_point() && (x.dim() == 2 || x.dim() == 3) && x.size(0) == block.num_src,
           "aggregate: x must be a float tensor [num_src = {}, F] or [num_src, H, F], got {}",
           block.num_src, x.sizes());
  const at::Tensor x3 = (x.dim() == 2 ? x.unsqueeze(1) : x).contiguous();
  // Autograd functions take no undefined tensors: "no weights" is an empty tensor.
  at::Tensor w = at::empty({0}, x.options());
  if (weight.defined()) {
    GL_CHECK(reduce == Reduce::kSum, "aggregate: edge weights are only supported with sum");
    GL_CHECK(
        weight.size(0) == block.num_edges() && weight.numel() == block.num_edges() * x3.size(1),
        "aggregate: weight must be [E = {}] or [E, H = {}], got {}", block.num_edges(), x3.size(1),
        weight.sizes());
    w = weight.reshape({block.num_edges(), x3.size(1)}).to(x.scalar_type()).contiguous();
  } else {
    w = mean_weights(block, reduce, x3.size(1), x.options());
  }
  const at::Tensor out = use_native_kernels(x3)
                             ? AggregateFunction::apply(x3, w, block.indptr, block.indices,
                                                        block.num_src, static_cast<int64_t>(reduce))
                             : tensor_ops::aggregate(block, x3, reduce, w);
  return x.dim() == 2 ? out.squeeze(1) : out;
}

}  // namespace graphloom::nn
