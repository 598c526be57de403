// A dense layer's product, x W^T + b, computed in blocks of rows. OpenBLAS packs a thread's
// whole share of the rows' side of a product into its per-thread buffer: a first layer's
// 113k x 256 input (`bench train --data er`) touched 53 MB of each thread's buffer, resident
// until exit, where blocks of rows touch a few.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

namespace graphloom::nn {

// x [rows, in] times weight [out, in] transposed, plus bias [out] when defined; differentiable
// in all three. Under CPU autocast (--precision bf16) it is libtorch's addmm / mm, so that the
// product runs in the autocast type.
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// relu_dropout(linear(x, weight, bias), p, training), with the same mask, in one pass over each
// block of rows while it is in cache. It keeps x, the weight and a bit per output element for
// backward, where relu_dropout's output and gradient each held a full [rows, out] tensor.
at::Tensor linear_relu_dropout(const at::Tensor& x, const at::Tensor& weight,
                               const at::Tensor& bias, double p, bool training);

// The BLAS that linear() and linear_relu_dropout() compute on, for benchmark output:
// "OpenBLAS (<its build configuration>)" where Debian's OpenMP build of OpenBLAS is installed,
// else "libtorch's" (the torch wheel's MKL). GRAPHLOOM_BLAS=torch picks libtorch's.
std::string dense_product_blas();

}  // namespace graphloom::nn
