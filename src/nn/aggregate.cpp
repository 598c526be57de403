// The aggregation kernel (SpMM over the block's CSC) and its exact backward.
//
// Forward runs over destinations (each output row owned by one thread). The gradient for x
// runs over sources through the block's transpose, so it too writes each row from one thread:
// no atomics, deterministic sums. Max keeps the arg-max source per output element; its
// backward runs over feature columns, which are disjoint between threads.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <limits>

#include "graphloom/base/error.h"
#include "graphloom/nn/sparse_ops.h"

namespace graphloom::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Source -> (edge positions) grouping of a block: a counting sort of its indices.
struct Transpose {
  at::Tensor indptr;  // [num_src + 1]
  at::Tensor edges;   // [E] edge positions grouped by source
  at::Tensor dst;     // [E] destination of each edge position
};

Transpose transpose(const BlockView& block) {
  const int64_t num_src = block.num_src;
  const int64_t num_edges = block.num_edges();
  Transpose t{at::zeros({num_src + 1}, at::kLong), at::empty({num_edges}, at::kLong),
              at::repeat_interleave(at::arange(block.num_dst(), at::kLong), in_degrees(block))};
  int64_t* ptr = t.indptr.data_ptr<int64_t>();
  const int64_t* src = block.indices.data_ptr<int64_t>();
  for (int64_t e = 0; e < num_edges; ++e) ++ptr[src[e] + 1];
  for (int64_t s = 0; s < num_src; ++s) ptr[s + 1] += ptr[s];
  std::vector<int64_t> next(ptr, ptr + num_src);
  int64_t* edges = t.edges.data_ptr<int64_t>();
  for (int64_t e = 0; e < num_edges; ++e) edges[next[src[e]]++] = e;
  return t;
}

// Per-edge coefficient for head h: the edge weight (if any) times 1/deg(d) (for mean).
template <typename T>
struct Coefficient {
  const T* weight;  // [E, H] or null
  const int64_t* indptr;
  int64_t heads;
  bool mean;
  T operator()(int64_t e, int64_t d, int64_t h) const {
    T c = weight != nullptr ? weight[e * heads + h] : T(1);
    if (mean) c /= static_cast<T>(indptr[d + 1] - indptr[d]);
    return c;
  }
};

// Rows read through an index are random accesses of a few hundred bytes: fetch the row this
// many edges ahead into L2, as the feature gather does (`bench train`: the forward aggregation
// took a quarter of all CPU time without it).
constexpr int64_t kRowsAhead = 8;

template <typename T>
void prefetch_row(const T* row, int64_t values) {
  const auto* bytes = reinterpret_cast<const char*>(row);
  for (int64_t b = 0; b < values * static_cast<int64_t>(sizeof(T)); b += 64) {
    __builtin_prefetch(bytes + b, 0, 2);
  }
}

template <typename T>
void sum_forward(const BlockView& b, const T* x, const Coefficient<T>& coef, int64_t heads,
                 int64_t feats, T* out) {
  const int64_t* indptr = b.indptr.data_ptr<int64_t>();
  const int64_t* src = b.indices.data_ptr<int64_t>();
  const int64_t row = heads * feats;
  const int64_t num_edges = b.num_edges();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t d = 0; d < b.num_dst(); ++d) {
    T* o = out + d * row;
    std::fill(o, o + row, T(0));
    for (int64_t e = indptr[d]; e < indptr[d + 1]; ++e) {
      if (e + kRowsAhead < num_edges) prefetch_row(x + src[e + kRowsAhead] * row, row);
      const T* xs = x + src[e] * row;
      for (int64_t h = 0; h < heads; ++h) {
        const T c = coef(e, d, h);
        for (int64_t f = 0; f < feats; ++f) o[h * feats + f] += c * xs[h * feats + f];
      }
    }
  }
}

template <typename T>
void sum_backward_x(const BlockView& b, const Transpose& t, const T* grad_out,
                    const Coefficient<T>& coef, int64_t heads, int64_t feats, T* grad_x) {
  const int64_t* ptr = t.indptr.data_ptr<int64_t>();
  const int64_t* edges = t.edges.data_ptr<int64_t>();
  const int64_t* dst = t.dst.data_ptr<int64_t>();
  const int64_t row = heads * feats;
  const int64_t num_edges = b.num_edges();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t s = 0; s < b.num_src; ++s) {
    T* g = grad_x + s * row;
    std::fill(g, g + row, T(0));
    for (int64_t k = ptr[s]; k < ptr[s + 1]; ++k) {
      if (k + kRowsAhead < num_edges) {
        prefetch_row(grad_out + dst[edges[k + kRowsAhead]] * row, row);
      }
      const int64_t e = edges[k];
      const T* go = grad_out + dst[e] * row;
      for (int64_t h = 0; h < heads; ++h) {
        const T c = coef(e, dst[e], h);
        for (int64_t f = 0; f < feats; ++f) g[h * feats + f] += c * go[h * feats + f];
      }
    }
  }
}

// grad_weight[e, h] = <grad_out[d, h, :], x[s, h, :]>
template <typename T>
void sum_backward_weight(const BlockView& b, const T* x, const T* grad_out, int64_t heads,
                         int64_t feats, T* grad_weight) {
  const int64_t* indptr = b.indptr.data_ptr<int64_t>();
  const int64_t* src = b.indices.data_ptr<int64_t>();
  const int64_t row = heads * feats;
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t d = 0; d < b.num_dst(); ++d) {
    for (int64_t e = indptr[d]; e < indptr[d + 1]; ++e) {
      for (int64_t h = 0; h < heads; ++h) {
        T dot = 0;
        for (int64_t f = 0; f < feats; ++f) {
          dot += grad_out[d * row + h * feats + f] * x[src[e] * row + h * feats + f];
        }
        grad_weight[e * heads + h] = dot;
      }
    }
  }
}

template <typename T>
void max_forward(const BlockView& b, const T* x, int64_t row, T* out, int64_t* arg) {
  const int64_t* indptr = b.indptr.data_ptr<int64_t>();
  const int64_t* src = b.indices.data_ptr<int64_t>();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t d = 0; d < b.num_dst(); ++d) {
    T* o = out + d * row;
    int64_t* a = arg + d * row;
    std::fill(o, o + row, -std::numeric_limits<T>::infinity());
    std::fill(a, a + row, int64_t{-1});
    for (int64_t e = indptr[d]; e < indptr[d + 1]; ++e) {
      const T* xs = x + src[e] * row;
      for (int64_t j = 0; j < row; ++j) {
        if (xs[j] > o[j]) {
          o[j] = xs[j];
          a[j] = src[e];
        }
      }
    }
    for (int64_t j = 0; j < row; ++j) {
      if (a[j] < 0) o[j] = 0;
    }
  }
}

template <typename T>
void max_backward(int64_t num_dst, const T* grad_out, const int64_t* arg, int64_t row, T* grad_x) {
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < row; ++j) {
    for (int64_t d = 0; d < num_dst; ++d) {
      const int64_t s = arg[d * row + j];
      if (s >= 0) grad_x[s * row + j] += grad_out[d * row + j];
    }
  }
}

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
        sum_forward(block, x.data_ptr<scalar_t>(), coef, heads, feats, out.data_ptr<scalar_t>());
      }
    });
    ctx->save_for_backward({x, weight, indptr, indices, arg});
    ctx->saved_data["num_src"] = num_src;
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
    const int64_t heads = x.size(1);
    const int64_t feats = x.size(2);
    at::Tensor grad_x;
    at::Tensor grad_weight;
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "aggregate_backward", [&] {
      if (reduce == Reduce::kMax) {
        grad_x = at::zeros_like(x);
        max_backward(block.num_dst(), grad_out.data_ptr<scalar_t>(), saved[4].data_ptr<int64_t>(),
                     heads * feats, grad_x.data_ptr<scalar_t>());
        return;
      }
      const scalar_t* w = weight.numel() > 0 ? weight.data_ptr<scalar_t>() : nullptr;
      const Coefficient<scalar_t> coef{w, block.indptr.data_ptr<int64_t>(), heads,
                                       reduce == Reduce::kMean};
      if (ctx->needs_input_grad(0)) {
        grad_x = at::empty_like(x);
        sum_backward_x(block, transpose(block), grad_out.data_ptr<scalar_t>(), coef, heads, feats,
                       grad_x.data_ptr<scalar_t>());
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

at::Tensor in_degrees(const BlockView& block) {
  return block.indptr.slice(0, 1) - block.indptr.slice(0, 0, -1);
}

at::Tensor out_degrees(const BlockView& block) {
  return at::bincount(block.indices, {}, block.num_src);
}

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
  }
  const at::Tensor out = AggregateFunction::apply(x3, w, block.indptr, block.indices, block.num_src,
                                                  static_cast<int64_t>(reduce));
  return x.dim() == 2 ? out.squeeze(1) : out;
}

}  // namespace graphloom::nn
