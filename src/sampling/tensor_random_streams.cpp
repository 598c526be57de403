// Unsigned 64-bit arithmetic in int64 tensors: two's complement makes +, -, *, ^, & and | the
// same bits as on uint64_t; only right shifts, comparisons and the high half of a product need
// care. Left shifts are products by a power of two, which wrap the same way on every device.
#include "tensor_random_streams.h"

#include <limits>

#include "graphloom/base/random.h"

namespace graphloom::sampling {
namespace {

// Reinterprets an unsigned constant as the int64 with the same bits.
constexpr int64_t bits(uint64_t x) { return static_cast<int64_t>(x); }

at::Tensor shift_left(const at::Tensor& x, int k) { return x * (int64_t{1} << k); }

at::Tensor shift_right(const at::Tensor& x, int k) {
  return at::bitwise_right_shift(x, k).bitwise_and_(bits(~uint64_t{0} >> k));
}

at::Tensor rotate_left(const at::Tensor& x, int k) {
  return shift_left(x, k).bitwise_or_(shift_right(x, 64 - k));
}

// a < b as unsigned numbers: flipping the sign bit maps unsigned order onto signed order.
at::Tensor unsigned_less(const at::Tensor& a, const at::Tensor& b) {
  constexpr int64_t kSign = std::numeric_limits<int64_t>::min();
  return at::bitwise_xor(a, kSign) < at::bitwise_xor(b, kSign);
}

// The high 64 bits of the unsigned 128-bit product x * y, from 32-bit halves.
at::Tensor multiply_high(const at::Tensor& x, const at::Tensor& y) {
  constexpr int64_t kLow32 = 0xffffffff;
  const at::Tensor x_low = at::bitwise_and(x, kLow32), x_high = shift_right(x, 32);
  const at::Tensor y_low = at::bitwise_and(y, kLow32), y_high = shift_right(y, 32);
  const at::Tensor low_low = x_low * y_low;
  const at::Tensor low_high = x_low * y_high;
  const at::Tensor high_low = x_high * y_low;
  const at::Tensor cross = shift_right(low_low, 32) + at::bitwise_and(low_high, kLow32) +
                           at::bitwise_and(high_low, kLow32);
  return x_high * y_high + shift_right(low_high, 32) + shift_right(high_low, 32) +
         shift_right(cross, 32);
}

// 2^64 mod b for 1 <= b < 2^63, which is what `-b % b` computes on uint64_t.
at::Tensor two_to_64_mod(const at::Tensor& b) {
  const at::Tensor two_to_63_mod =
      at::remainder(at::remainder(at::full_like(b, std::numeric_limits<int64_t>::max()), b) + 1, b);
  return at::remainder(two_to_63_mod * 2, b);
}

}  // namespace

at::Tensor mix64_tensor(const at::Tensor& input) {
  at::Tensor x = input + bits(0x9e3779b97f4a7c15ULL);
  x = at::bitwise_xor(x, shift_right(x, 30)) * bits(0xbf58476d1ce4e5b9ULL);
  x = at::bitwise_xor(x, shift_right(x, 27)) * bits(0x94d049bb133111ebULL);
  return at::bitwise_xor(x, shift_right(x, 31));
}

at::Tensor stream_keys(uint64_t key, const at::Tensor& parts) {
  const uint64_t first = stream_key({key});
  return mix64_tensor(at::bitwise_xor(mix64_tensor(parts), bits(first)));
}

at::Tensor keyed_uniform_real(uint64_t key, const at::Tensor& nodes) {
  const at::Tensor hashed =
      mix64_tensor(nodes.to(at::kLong) * bits(0x9e3779b97f4a7c15ULL) + bits(key));
  // Below 2^53 the conversion and the power-of-two scale are exact on every device.
  return shift_right(hashed, 11).to(at::kDouble).mul_(0x1.0p-53);
}

TensorRandomStreams::TensorRandomStreams(const at::Tensor& keys) {
  at::Tensor key = keys;
  for (at::Tensor& word : state_) {
    key = mix64_tensor(key);
    word = key;
  }
}

at::Tensor TensorRandomStreams::next(const at::Tensor& active) {
  at::Tensor(&s)[4] = state_;
  const at::Tensor result = rotate_left(s[1] * 5, 7) * 9;
  const at::Tensor t = shift_left(s[1], 17);
  at::Tensor s2 = at::bitwise_xor(s[2], s[0]);
  at::Tensor s3 = at::bitwise_xor(s[3], s[1]);
  const at::Tensor s1 = at::bitwise_xor(s[1], s2);
  const at::Tensor s0 = at::bitwise_xor(s[0], s3);
  s2 = at::bitwise_xor(s2, t);
  s3 = rotate_left(s3, 45);
  s[0] = at::where(active, s0, s[0]);
  s[1] = at::where(active, s1, s[1]);
  s[2] = at::where(active, s2, s[2]);
  s[3] = at::where(active, s3, s[3]);
  return result;
}

at::Tensor TensorRandomStreams::uniform(const at::Tensor& bound, const at::Tensor& active) {
  at::Tensor x = next(active);
  at::Tensor low = x * bound;
  // RandomStream redraws while the low half is below 2^64 mod bound (which is below bound).
  const at::Tensor threshold = two_to_64_mod(bound);
  at::Tensor redraw = at::logical_and(active, unsigned_less(low, threshold));
  while (redraw.any().item<bool>()) {
    x = at::where(redraw, next(redraw), x);
    low = x * bound;
    redraw = at::logical_and(redraw, unsigned_less(low, threshold));
  }
  return multiply_high(x, bound);
}

at::Tensor TensorRandomStreams::uniform_real(const at::Tensor& active) {
  // Below 2^53 the conversion and the power-of-two scale are exact on every device.
  return shift_right(next(active), 11).to(at::kDouble).mul_(0x1.0p-53);
}

TensorRandomStreams TensorRandomStreams::subset(const at::Tensor& lanes) const {
  TensorRandomStreams out;
  for (int k = 0; k < 4; ++k) out.state_[k] = state_[k].index_select(0, lanes);
  return out;
}

void TensorRandomStreams::assign(const at::Tensor& lanes, const TensorRandomStreams& subset) {
  for (int k = 0; k < 4; ++k) state_[k].index_copy_(0, lanes, subset.state_[k]);
}

}  // namespace graphloom::sampling
