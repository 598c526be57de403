// The aggregation kernels over a block's CSC, shared by the aggregation ops (internal).
//
// Forward runs over destinations (each output row owned by one thread). The gradient for x
// runs over sources through the block's transpose, so it too writes each row from one thread:
// no atomics, deterministic sums. Max keeps the arg-max source per output element; its
// backward runs over feature columns, which are disjoint between threads.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "graphloom/base/cpu_dispatch.h"
#include "graphloom/nn/sparse_ops.h"

namespace graphloom::nn::kernels {

// Source -> (edge positions) grouping of a block: a counting sort of its indices.
struct Transpose {
  at::Tensor indptr;  // [num_src + 1]
  at::Tensor edges;   // [E] edge positions grouped by source
  at::Tensor dst;     // [E] destination of each edge position
};

inline Transpose transpose(const BlockView& block) {
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

// out = sum over edges e in [begin, end) of coefficient(e, d, h) * x[source[e]] per head h.
template <typename T>
GRAPHLOOM_CPU_DISPATCH void sum_edges_into_row(const T* x, const int64_t* source, int64_t begin,
                                               int64_t end, int64_t num_edges,
                                               const Coefficient<T>& coef, int64_t d, int64_t heads,
                                               int64_t feats, T* out) {
  const int64_t row = heads * feats;
  std::fill(out, out + row, T(0));
  for (int64_t e = begin; e < end; ++e) {
    if (e + kRowsAhead < num_edges) prefetch_row(x + source[e + kRowsAhead] * row, row);
    const T* xs = x + source[e] * row;
    for (int64_t h = 0; h < heads; ++h) {
      const T c = coef(e, d, h);
      for (int64_t f = 0; f < feats; ++f) out[h * feats + f] += c * xs[h * feats + f];
    }
  }
}

// Output rows are `out_stride` apart (row = heads * feats when packed).
template <typename T>
void sum_forward(const BlockView& b, const T* x, const Coefficient<T>& coef, int64_t heads,
                 int64_t feats, T* out, int64_t out_stride) {
  const int64_t* indptr = b.indptr.data_ptr<int64_t>();
  const int64_t* src = b.indices.data_ptr<int64_t>();
  const int64_t num_edges = b.num_edges();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t d = 0; d < b.num_dst(); ++d) {
    sum_edges_into_row(x, src, indptr[d], indptr[d + 1], num_edges, coef, d, heads, feats,
                       out + d * out_stride);
  }
}

// grad = sum over the edges edges[k], k in [begin, end), of coefficient * grad_out[dst[edge]].
template <typename T>
GRAPHLOOM_CPU_DISPATCH void sum_gradient_into_row(const T* grad_out, int64_t grad_stride,
                                                  const int64_t* edges, const int64_t* dst,
                                                  int64_t begin, int64_t end, int64_t num_edges,
                                                  const Coefficient<T>& coef, int64_t heads,
                                                  int64_t feats, T* grad) {
  const int64_t row = heads * feats;
  std::fill(grad, grad + row, T(0));
  for (int64_t k = begin; k < end; ++k) {
    if (k + kRowsAhead < num_edges) {
      prefetch_row(grad_out + dst[edges[k + kRowsAhead]] * grad_stride, row);
    }
    const int64_t e = edges[k];
    const T* go = grad_out + dst[e] * grad_stride;
    for (int64_t h = 0; h < heads; ++h) {
      const T c = coef(e, dst[e], h);
      for (int64_t f = 0; f < feats; ++f) grad[h * feats + f] += c * go[h * feats + f];
    }
  }
}

// grad_out rows are `grad_stride` apart.
template <typename T>
void sum_backward_x(const BlockView& b, const Transpose& t, const T* grad_out, int64_t grad_stride,
                    const Coefficient<T>& coef, int64_t heads, int64_t feats, T* grad_x) {
  const int64_t* ptr = t.indptr.data_ptr<int64_t>();
  const int64_t* edges = t.edges.data_ptr<int64_t>();
  const int64_t* dst = t.dst.data_ptr<int64_t>();
  const int64_t row = heads * feats;
  const int64_t num_edges = b.num_edges();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t s = 0; s < b.num_src; ++s) {
    sum_gradient_into_row(grad_out, grad_stride, edges, dst, ptr[s], ptr[s + 1], num_edges, coef,
                          heads, feats, grad_x + s * row);
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

}  // namespace graphloom::nn::kernels
