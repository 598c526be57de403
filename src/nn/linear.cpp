// Forward and the input's gradient go a block of rows at a time into one output tensor; the
// weight's gradient is one product (its row side is the weight's, small). The fused form with
// relu and dropout goes a block at a time through backward too.
#include "graphloom/nn/linear.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

#include "dense_product.h"
#include "dropout_mask.h"
#include "graphloom/base/error.h"
#include "graphloom/nn/dropout.h"
#include "graphloom/nn/sparse_ops.h"

namespace graphloom::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// 16384 rows of 256 floats are 16 MB, shared by the threads: a few MB of packing buffer each.
constexpr int64_t kRowsPerBlock = 16384;

// out = a b (+ bias when defined and not empty), a block of a's rows at a time;
// after_block(block, first_row) sees each block of out right after its product.
template <typename AfterBlock>
at::Tensor product_in_row_blocks(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias,
                                 AfterBlock&& after_block) {
  at::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
  const bool has_bias = bias.defined() && bias.numel() > 0;
  for (int64_t begin = 0; begin < a.size(0); begin += kRowsPerBlock) {
    const int64_t rows = std::min(kRowsPerBlock, a.size(0) - begin);
    at::Tensor block = out.narrow(0, begin, rows);
    if (has_bias) block.copy_(bias.expand_as(block));  // as addmm: one pass, then C += a b
    detail::product_into(block, a.narrow(0, begin, rows), b, /*accumulate=*/has_bias);
    after_block(block, begin);
  }
  return out;
}

at::Tensor product_in_row_blocks(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  return product_in_row_blocks(a, b, bias, [](const at::Tensor&, int64_t) {});
}

// No bias is an empty one: custom autograd functions take no undefined inputs.
at::Tensor bias_or_empty(const at::Tensor& bias, const at::Tensor& weight) {
  return bias.defined() ? bias : at::empty({0}, weight.options());
}

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias) {
    ctx->save_for_backward({x, weight});
    ctx->saved_data["bias"] = bias.numel() > 0;
    return product_in_row_blocks(x, weight.t(), bias);
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor grad = grad_outputs[0].contiguous();
    at::Tensor grad_x;
    at::Tensor grad_weight;
    at::Tensor grad_bias;
    if (ctx->needs_input_grad(0)) grad_x = product_in_row_blocks(grad, weight, {});
    if (ctx->needs_input_grad(1)) {
      grad_weight = at::empty_like(weight);
      detail::product_into(grad_weight, grad.t(), x);
    }
    if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)) grad_bias = grad.sum(0);
    return {grad_x, grad_weight, grad_bias};
  }
};

// relu_dropout(x W^T + b): each block of rows is masked in place right after its product, and
// backward turns one block of the output's gradient at a time into the product's gradient, so
// neither the unmasked output nor the product's whole gradient is ever held.
class LinearReluDropoutFunction : public torch::autograd::Function<LinearReluDropoutFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias, int64_t key, double p) {
    const int64_t width = weight.size(0);
    at::Tensor positive = at::empty({(x.size(0) * width + 63) / 64}, at::kLong);
    auto* bits = reinterpret_cast<uint64_t*>(positive.data_ptr<int64_t>());
    at::Tensor out =
        product_in_row_blocks(x, weight.t(), bias, [&](const at::Tensor& block, int64_t first_row) {
          detail::apply_dropout_mask(block, block, first_row * width, static_cast<uint64_t>(key), p,
                                     bits);
        });
    ctx->save_for_backward({x, weight, positive});
    ctx->saved_data["bias"] = bias.numel() > 0;
    ctx->saved_data["p"] = p;
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const auto* bits = reinterpret_cast<const uint64_t*>(saved[2].data_ptr<int64_t>());
    const double p = ctx->saved_data["p"].toDouble();
    const at::Tensor grad = grad_outputs[0].contiguous();
    const int64_t width = weight.size(0);
    at::Tensor grad_x;
    at::Tensor grad_weight;
    at::Tensor grad_bias;
    if (ctx->needs_input_grad(0)) grad_x = at::empty_like(x);
    if (ctx->needs_input_grad(1)) grad_weight = at::zeros_like(weight);
    if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)) {
      grad_bias = at::zeros({width}, grad.options());
    }
    const at::Tensor product_grad =
        at::empty({std::min(kRowsPerBlock, x.size(0)), width}, grad.options());
    for (int64_t begin = 0; begin < x.size(0); begin += kRowsPerBlock) {
      const int64_t rows = std::min(kRowsPerBlock, x.size(0) - begin);
      const at::Tensor block = product_grad.narrow(0, 0, rows);
      detail::relu_dropout_gradient(bits, grad.narrow(0, begin, rows), begin * width, p, block);
      if (grad_bias.defined()) grad_bias += block.sum(0);
      if (grad_weight.defined()) {
        detail::product_into(grad_weight, block.t(), x.narrow(0, begin, rows), /*accumulate=*/true);
      }
      if (grad_x.defined()) detail::product_into(grad_x.narrow(0, begin, rows), block, weight);
    }
    return {grad_x, grad_weight, grad_bias, {}, {}};
  }
};

}  // namespace

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (at::autocast::is_autocast_enabled(at::kCPU) || !use_native_kernels(x)) {
    return bias.defined() ? at::addmm(bias, x, weight.t()) : at::mm(x, weight.t());
  }
  return LinearFunction::apply(x.contiguous(), weight, bias_or_empty(bias, weight));
}

at::Tensor linear_relu_dropout(const at::Tensor& x, const at::Tensor& weight,
                               const at::Tensor& bias, double p, bool training) {
  if (!training) return at::relu(linear(x, weight, bias));
  if (at::autocast::is_autocast_enabled(at::kCPU) || !use_native_kernels(x))
    return relu_dropout(linear(x, weight, bias), p, training);
  GL_CHECK(p >= 0 && p < 1, "dropout probability must be in [0, 1), got {}", p);
  const uint64_t key = p > 0 ? detail::next_dropout_key() : 0;  // as relu_dropout draws it
  return LinearReluDropoutFunction::apply(x.contiguous(), weight, bias_or_empty(bias, weight),
                                          static_cast<int64_t>(key), p);
}

}  // namespace graphloom::nn
