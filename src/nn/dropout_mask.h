// The dropout mask kernels, shared by dropout.cpp and the fused dense + relu + dropout of
// linear.cpp. Internal to the nn module. Element i of a tensor masked under key k is kept iff
// the i-th draw of chunk i / kMaskChunk of stream (k, chunk) is >= p, so a tensor can be masked
// a range of elements at a time (ranges starting at a multiple of kMaskChunk) with the mask of
// masking it whole.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace graphloom::nn::detail {

constexpr int64_t kMaskChunk = 4096;

// A fresh key from libtorch's default generator (torch::manual_seed reproduces it).
uint64_t next_dropout_key();

// out = dropout(in) for elements [first, first + in.numel()) of a tensor masked under `key`;
// with `positive`, out = dropout(relu(in)) and bit j of the tensor's mask words says whether
// its element j is positive after masking (positive[j / 64], for j in the range). `in` and `out`
// are contiguous, of one floating type, and may be the same tensor.
void apply_dropout_mask(const at::Tensor& in, const at::Tensor& out, int64_t first, uint64_t key,
                        double p, uint64_t* positive);

// grad_x = grad_y where the mask bit of the element is set, times 1 / (1 - p), else 0: the
// gradient of dropout(relu(x)), for elements [first, first + grad_y.numel()).
void relu_dropout_gradient(const uint64_t* positive, const at::Tensor& grad_y, int64_t first,
                           double p, const at::Tensor& grad_x);

}  // namespace graphloom::nn::detail
