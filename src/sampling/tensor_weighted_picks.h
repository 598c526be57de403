// Weighted picks of the tensor-op sampler (internal to the sampling module): the C++ kernel's
// weighted_picks.h in int64 and float64 tensor arithmetic, for many columns (lanes) at once,
// bit for bit on any device.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "tensor_random_streams.h"

namespace graphloom::sampling {

// The `keep` of packed alias entries (graph/weight_alias.h: its float32 bits low, `other`
// high; little-endian here and on CUDA): positive exactly where the weight is.
at::Tensor alias_keep(const at::Tensor& entries);
at::Tensor alias_other(const at::Tensor& entries);

// The positions in [0, degree) of `picks` weighted draws with replacement per lane, each a
// position and a coin against its alias entry: [lanes, picks].
at::Tensor weighted_picks_with_replacement(TensorRandomStreams& rng, const at::Tensor& alias,
                                           const at::Tensor& begin, const at::Tensor& degree,
                                           int64_t picks);

// `picks` (<= kMaxSuccessivePicks) distinct positions per lane by successive sampling, as
// WeightedColumn::pick_successively draws them: up to 8 alias draws per pick until one is
// new, then one draw over the unpicked fixed-point weights. Every lane has at least `picks`
// positive weights (`weights`: the graph's, per CSC position).
at::Tensor weighted_picks_without_replacement(TensorRandomStreams& rng, const at::Tensor& alias,
                                              const at::Tensor& weights, const at::Tensor& begin,
                                              const at::Tensor& degree, int64_t picks);

}  // namespace graphloom::sampling
