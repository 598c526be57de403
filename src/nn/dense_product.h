// The dense products of graphloom's layers (nn::linear forward and backward), on OpenBLAS
// where it is installed, else on libtorch's BLAS. The torch wheel computes GEMMs with MKL,
// which takes its generic AVX2 path on AMD processors: 0.55-0.9x OpenBLAS's GFLOP/s on this
// project's AMD EPYC hosts, and 0.89-0.98x the training seeds/s of the OpenBLAS build
// (docs/toolchain.md, "BLAS").
#pragma once

#include <ATen/core/Tensor.h>

namespace graphloom::nn::detail {

// out = a b (accumulate: out += a b). float32 CPU matrices whose rows or columns are
// contiguous (a transposed view is fine); out [a.rows, b.cols] with contiguous rows.
void product_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                  bool accumulate = false);

}  // namespace graphloom::nn::detail
