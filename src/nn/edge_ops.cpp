// Per-edge operators for attention: u_add_v (SDDMM) and edge softmax, with exact backward.
// Both walk the block's CSC, where each destination's in-edges are one contiguous segment.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <limits>

#include "graphloom/base/error.h"
#include "graphloom/nn/sparse_ops.h"
#include "tensor_sparse_ops.h"

namespace graphloom::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

template <typename T>
void edge_add_kernel(const T* a, const T* b, const int64_t* ptr, const int64_t* src,
                     int64_t num_dst, int64_t heads, T* out) {
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t d = 0; d < num_dst; ++d) {
    for (int64_t e = ptr[d]; e < ptr[d + 1]; ++e) {
      for (int64_t h = 0; h < heads; ++h)
        out[e * heads + h] = a[src[e] * heads + h] + b[d * heads + h];
    }
  }
}

template <typename T>
void softmax_forward(const T* s, const int64_t* ptr, int64_t num_dst, int64_t heads, T* o) {
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t d = 0; d < num_dst; ++d) {
    for (int64_t h = 0; h < heads; ++h) {
      T top = -std::numeric_limits<T>::infinity();
      for (int64_t e = ptr[d]; e < ptr[d + 1]; ++e) top = std::max(top, s[e * heads + h]);
      T total = 0;
      for (int64_t e = ptr[d]; e < ptr[d + 1]; ++e) {
        o[e * heads + h] = std::exp(s[e * heads + h] - top);
        total += o[e * heads + h];
      }
      for (int64_t e = ptr[d]; e < ptr[d + 1]; ++e) o[e * heads + h] /= total;
    }
  }
}

// d softmax: grad_s = y * (g - <g, y>) within each segment.
template <typename T>
void softmax_backward(const T* y, const T* g, const int64_t* ptr, int64_t num_dst, int64_t heads,
                      T* r) {
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t d = 0; d < num_dst; ++d) {
    for (int64_t h = 0; h < heads; ++h) {
      T dot = 0;
      for (int64_t e = ptr[d]; e < ptr[d + 1]; ++e) dot += g[e * heads + h] * y[e * heads + h];
      for (int64_t e = ptr[d]; e < ptr[d + 1]; ++e) {
        r[e * heads + h] = y[e * heads + h] * (g[e * heads + h] - dot);
      }
    }
  }
}

class EdgeAddFunction : public torch::autograd::Function<EdgeAddFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const at::Tensor& indptr, const at::Tensor& indices) {
    const int64_t heads = a.size(1);
    const int64_t num_dst = indptr.numel() - 1;
    at::Tensor out = at::empty({indices.numel(), heads}, a.options());
    AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "edge_add", [&] {
      edge_add_kernel(a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), indptr.data_ptr<int64_t>(),
                      indices.data_ptr<int64_t>(), num_dst, heads, out.data_ptr<scalar_t>());
    });
    ctx->save_for_backward({indptr, indices});
    ctx->saved_data["num_src"] = a.size(0);
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& indptr = saved[0];
    const at::Tensor& indices = saved[1];
    const at::Tensor grad = grad_outputs[0].contiguous();
    const int64_t num_src = ctx->saved_data["num_src"].toInt();
    // d/da: sum over each source's out-edges; d/db: sum over each destination's segment.
    at::Tensor grad_a =
        at::zeros({num_src, grad.size(1)}, grad.options()).index_add_(0, indices, grad);
    const at::Tensor dst = at::repeat_interleave(at::arange(indptr.numel() - 1, at::kLong),
                                                 indptr.slice(0, 1) - indptr.slice(0, 0, -1));
    at::Tensor grad_b =
        at::zeros({indptr.numel() - 1, grad.size(1)}, grad.options()).index_add_(0, dst, grad);
    return {grad_a, grad_b, {}, {}};
  }
};

class EdgeSoftmaxFunction : public torch::autograd::Function<EdgeSoftmaxFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& scores,
                            const at::Tensor& indptr) {
    const int64_t heads = scores.size(1);
    const int64_t num_dst = indptr.numel() - 1;
    at::Tensor out = at::empty_like(scores);
    AT_DISPATCH_FLOATING_TYPES(scores.scalar_type(), "edge_softmax", [&] {
      softmax_forward(scores.data_ptr<scalar_t>(), indptr.data_ptr<int64_t>(), num_dst, heads,
                      out.data_ptr<scalar_t>());
    });
    ctx->save_for_backward({out, indptr});
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& out = saved[0];
    const at::Tensor& indptr = saved[1];
    const at::Tensor grad = grad_outputs[0].contiguous();
    at::Tensor grad_scores = at::empty_like(out);
    const int64_t heads = out.size(1);
    const int64_t num_dst = indptr.numel() - 1;
    AT_DISPATCH_FLOATING_TYPES(out.scalar_type(), "edge_softmax_backward", [&] {
      softmax_backward(out.data_ptr<scalar_t>(), grad.data_ptr<scalar_t>(),
                       indptr.data_ptr<int64_t>(), num_dst, heads,
                       grad_scores.data_ptr<scalar_t>());
    });
    return {grad_scores, {}};
  }
};

}  // namespace

at::Tensor edge_add(const BlockView& block, const at::Tensor& a, const at::Tensor& b) {
  GL_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(1) && a.size(0) == block.num_src &&
               b.size(0) == block.num_dst(),
           "edge_add: expected a [num_src = {}, H] and b [num_dst = {}, H], got {} and {}",
           block.num_src, block.num_dst(), a.sizes(), b.sizes());
  if (!use_native_kernels(a))
    return tensor_ops::edge_add(block, full_precision(a), full_precision(b));
  return EdgeAddFunction::apply(full_precision(a).contiguous(), full_precision(b).contiguous(),
                                block.indptr, block.indices);
}

at::Tensor edge_softmax(const BlockView& block, const at::Tensor& scores) {
  GL_CHECK(scores.dim() == 2 && scores.size(0) == block.num_edges(),
           "edge_softmax: scores must be [E = {}, H], got {}", block.num_edges(), scores.sizes());
  if (!use_native_kernels(scores)) return tensor_ops::edge_softmax(block, full_precision(scores));
  return EdgeSoftmaxFunction::apply(full_precision(scores).contiguous(), block.indptr);
}

}  // namespace graphloom::nn
