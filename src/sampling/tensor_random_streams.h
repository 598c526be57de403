// RandomStream (graphloom/base/random.h) for many streams at once, in int64 tensor arithmetic
// (internal to the sampling module). Lane i of a TensorRandomStreams draws exactly the numbers
// that RandomStream(keys[i]) draws, on whatever device the keys live: additions and products
// wrap, unsigned shifts and comparisons are spelled out with masks, so the bits do not depend
// on the device.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace graphloom::sampling {

// mix64 (base/random.h) of every element.
at::Tensor mix64_tensor(const at::Tensor& x);

// stream_key({key, part}) of every element of `parts`.
at::Tensor stream_keys(uint64_t key, const at::Tensor& parts);

// labor_variate (labor.h) of every node id in `nodes` under `key`: the float64 in [0, 1) from
// the top 53 bits of mix64(key + node * kGolden).
at::Tensor keyed_uniform_real(uint64_t key, const at::Tensor& nodes);

class TensorRandomStreams {
 public:
  // One xoshiro256** stream per element of the int64 tensor `keys`.
  explicit TensorRandomStreams(const at::Tensor& keys);

  // The next number of each lane where `active` (bool) holds; the other lanes do not advance
  // (their result is unspecified).
  at::Tensor next(const at::Tensor& active);

  // RandomStream::uniform: a number in [0, bound) per active lane (bound: int64, >= 1), with
  // the same rejection draws as the scalar stream.
  at::Tensor uniform(const at::Tensor& bound, const at::Tensor& active);

  // RandomStream::uniform_real: a float64 in [0, 1) per active lane, from the top 53 bits.
  at::Tensor uniform_real(const at::Tensor& active);

  // The streams of `lanes` (int64 indices), as they stand; assign() puts such a subset back
  // after it drew, so that lanes draw in separate steps and continue where they stopped.
  TensorRandomStreams subset(const at::Tensor& lanes) const;
  void assign(const at::Tensor& lanes, const TensorRandomStreams& subset);

 private:
  TensorRandomStreams() = default;

  at::Tensor state_[4];
};

}  // namespace graphloom::sampling
