// Forward and the input's gradient go a block of rows at a time into one output tensor; the
// weight's gradient is one product (its row side is the weight's, small).
#include "graphloom/nn/linear.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

namespace graphloom::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// 16384 rows of 256 floats are 16 MB, shared by the threads: a few MB of packing buffer each.
constexpr int64_t kRowsPerBlock = 16384;

// out = a b (+ bias), a block of a's rows at a time.
at::Tensor product_in_row_blocks(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  at::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
  for (int64_t begin = 0; begin < a.size(0); begin += kRowsPerBlock) {
    const int64_t rows = std::min(kRowsPerBlock, a.size(0) - begin);
    at::Tensor block = out.narrow(0, begin, rows);
    if (bias.defined()) {
      at::addmm_out(block, bias, a.narrow(0, begin, rows), b);
    } else {
      at::mm_out(block, a.narrow(0, begin, rows), b);
    }
  }
  return out;
}

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias) {
    ctx->save_for_backward({x, weight});
    ctx->saved_data["bias"] = bias.numel() > 0;
    return product_in_row_blocks(x, weight.t(), bias.numel() > 0 ? bias : at::Tensor());
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
    if (ctx->needs_input_grad(1)) grad_weight = at::mm(grad.t(), x);
    if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)) grad_bias = grad.sum(0);
    return {grad_x, grad_weight, grad_bias};
  }
};

}  // namespace

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (at::autocast::is_cpu_enabled()) {
    return bias.defined() ? at::addmm(bias, x, weight.t()) : at::mm(x, weight.t());
  }
  // No bias is an empty one: custom autograd functions take no undefined inputs.
  return LinearFunction::apply(x.contiguous(), weight,
                               bias.defined() ? bias : at::empty({0}, weight.options()));
}

}  // namespace graphloom::nn
