// Counter-based random streams: a generator is a pure function of its key (seed, epoch,
// batch, node, ...), so results do not depend on thread count or scheduling order.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace graphloom {

// SplitMix64 finalizer: a bijective 64-bit mixer used to derive stream keys.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Hashes a sequence of key parts into one stream key.
constexpr uint64_t stream_key(std::initializer_list<uint64_t> parts) {
  uint64_t key = 0x6a09e667f3bcc909ULL;
  for (uint64_t part : parts) key = mix64(key ^ mix64(part));
  return key;
}

// xoshiro256** seeded from one 64-bit key: fast, small state, good statistical quality.
class RandomStream {
 public:
  explicit constexpr RandomStream(uint64_t key) {
    for (auto& word : state_) {
      key = mix64(key);
      word = key;
    }
  }

  constexpr uint64_t next() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform integer in [0, bound) without modulo bias (Lemire's multiply-shift method).
  // Always inlined: the sampling kernels call it per pick, and an out-of-line call keeps the
  // stream's state in memory and stretches each pick past what the core can overlap.
  [[gnu::always_inline]] uint64_t uniform(uint64_t bound) {
    uint64_t x = next();
    __uint128_t product = static_cast<__uint128_t>(x) * bound;
    auto low = static_cast<uint64_t>(product);
    if (low < bound) {
      const uint64_t threshold = -bound % bound;
      while (low < threshold) {
        x = next();
        product = static_cast<__uint128_t>(x) * bound;
        low = static_cast<uint64_t>(product);
      }
    }
    return static_cast<uint64_t>(product >> 64);
  }

  // Uniform double in [0, 1).
  double uniform_real() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Standard normal (Box-Muller; one value per call keeps the stream stateless across calls).
  double normal();

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4]{};
};

// 128 bits from the operating system's random source as 32 hex digits: a secret (a cluster
// or rendezvous token), never a stream key.
std::string random_token();

}  // namespace graphloom
