// Message passing over a Block as autograd functions with native kernels (DESIGN.md layer 4):
// SpMM-style aggregation (copy source features, optionally weighted per edge, reduced by sum,
// mean or max per destination), SDDMM (u_add_v) and edge softmax for attention.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "graphloom/sampling/block.h"

namespace graphloom::nn {

enum class Reduce { kSum, kMean, kMax };

// The native kernels work in float32/float64: inputs in a 16-bit float (from bfloat16 autocast
// of the dense layers) are widened, so sums over many neighbors keep full precision.
at::Tensor full_precision(const at::Tensor& x);

// The part of a Block the kernels read.
struct BlockView {
  at::Tensor indptr;   // int64 [num_dst + 1]
  at::Tensor indices;  // int64 [num_edges], positions of sources
  int64_t num_src = 0;
  at::Tensor src_ids;     // int64 [num_src] global ids (optional; layers that need node data)
  at::Tensor edge_types;  // int64 [num_edges] (typed graphs; relational layers need it)

  int64_t num_dst() const { return indptr.numel() - 1; }
  int64_t num_edges() const { return indices.numel(); }
  static BlockView of(const sampling::Block& block) {
    return {block.indptr, block.indices, block.num_src(), block.src_ids, block.edge_types};
  }
};

// out[d] = reduce over in-edges e = (s -> d) of weight[e] * x[s].
//   x: [num_src, F] or [num_src, H, F] (float or double); weight: undefined or [E] / [E, H]
//   (sum only). Destinations without in-edges get 0. Differentiable in x and weight.
at::Tensor aggregate(const BlockView& block, const at::Tensor& x, Reduce reduce,
                     const at::Tensor& weight = {});

// e[k] = a[src(k)] + b[dst(k)] for every edge k: a [num_src, H], b [num_dst, H] -> [E, H].
at::Tensor edge_add(const BlockView& block, const at::Tensor& a, const at::Tensor& b);

// Softmax of edge scores over each destination's in-edges: scores [E, H] -> [E, H].
at::Tensor edge_softmax(const BlockView& block, const at::Tensor& scores);

// int64 [num_dst]: in-degree of each destination; int64 [num_src]: out-degree of each source.
at::Tensor in_degrees(const BlockView& block);
at::Tensor out_degrees(const BlockView& block);

}  // namespace graphloom::nn
