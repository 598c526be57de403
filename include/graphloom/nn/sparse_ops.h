// Message passing over a Block as autograd functions with native kernels (DESIGN.md layer 4):
// SpMM-style aggregation (copy source features, optionally weighted per edge, reduced by sum,
// mean or max per destination), SDDMM (u_add_v) and edge softmax for attention.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "graphloom/sampling/block.h"

namespace graphloom::nn {

enum class Reduce { kSum, kMean, kMax };

// Whether graphloom's native CPU kernels (message passing, dense products, dropout) run on x:
// when it lives on the CPU, unless a GenericOpsScope is active on this thread. Tensors on any
// other device always take ATen's generic ops (differentiated by ATen's autograd).
bool use_native_kernels(const at::Tensor& x);

// While one lives, this thread's layers take the generic path on the CPU too: what a GPU
// runs, so that it can be tested against the native kernels on a machine without one.
class GenericOpsScope {
 public:
  GenericOpsScope();
  ~GenericOpsScope();
  GenericOpsScope(const GenericOpsScope&) = delete;
  GenericOpsScope& operator=(const GenericOpsScope&) = delete;

 private:
  bool previous_;
};

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
  // int64 [num_src] (optional): the layer's input is a table (e.g. the whole feature table)
  // whose row source_rows[s] is source s. A first layer that reads its input rows in place
  // gets this instead of a gathered copy of them (hundreds of MB per batch on big graphs).
  at::Tensor source_rows;
  // float [num_edges] (optional): LABOR-*'s importance weights (Block::edge_weights). Mean
  // aggregations become weighted means, sum over in-edges of w * x / in-degree.
  at::Tensor edge_weights;

  int64_t num_dst() const { return indptr.numel() - 1; }
  int64_t num_edges() const { return indices.numel(); }
  static BlockView of(const sampling::Block& block) {
    return {block.indptr, block.indices,     block.num_src(), block.src_ids, block.edge_types,
            {},           block.edge_weights};
  }
  // With source_rows: the same edges with the table's rows (table_rows of them) as sources, so
  // that aggregation reads the table directly. Node ids (src_ids) do not carry over.
  BlockView over_table(int64_t table_rows) const;
};

// The destinations' rows of a layer input x: its first num_dst rows, or with source_rows the
// table's rows of the destinations (a gathered copy of those few).
at::Tensor destination_rows(const BlockView& block, const at::Tensor& x);

// The per-edge coefficients a `reduce` over the block applies: for a mean over a block with
// edge_weights, those as a contiguous [num_edges, heads] tensor with x's options; otherwise an
// empty tensor (the kernels' "no weights").
at::Tensor mean_weights(const BlockView& block, Reduce reduce, int64_t heads,
                        const at::TensorOptions& options);

// out[d] = reduce over in-edges e = (s -> d) of weight[e] * x[s].
//   x: [num_src, F] or [num_src, H, F] (float or double); weight: undefined or [E] / [E, H]
//   (sum only). A mean over a block with edge_weights weighs by them. Destinations without
//   in-edges get 0. Differentiable in x and weight.
at::Tensor aggregate(const BlockView& block, const at::Tensor& x, Reduce reduce,
                     const at::Tensor& weight = {});

// [x's destination rows | aggregate(block, x, reduce)] as one [num_dst, 2F] tensor (2-D x,
// sum or mean, weighted by block.edge_weights when it has them): what GraphSAGE multiplies by
// [W_self | W_neigh] in one GEMM. With block.source_rows, x is a table read in place.
// Differentiable in x.
at::Tensor self_and_neighbors(const BlockView& block, const at::Tensor& x, Reduce reduce);

// e[k] = a[src(k)] + b[dst(k)] for every edge k: a [num_src, H], b [num_dst, H] -> [E, H].
at::Tensor edge_add(const BlockView& block, const at::Tensor& a, const at::Tensor& b);

// Softmax of edge scores over each destination's in-edges: scores [E, H] -> [E, H].
at::Tensor edge_softmax(const BlockView& block, const at::Tensor& scores);

// int64 [num_dst]: in-degree of each destination; int64 [num_src]: out-degree of each source.
at::Tensor in_degrees(const BlockView& block);
at::Tensor out_degrees(const BlockView& block);

}  // namespace graphloom::nn
