// LABOR's per-node variates: keyed uniforms, or with batch dependency a rotation between two
// windows' standard normals mapped back to a uniform (as GraphBolt's continuous seeds).
#include "graphloom/sampling/labor.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"

namespace graphloom::sampling {
namespace {

// Marks LABOR's keys apart from the neighbor sampler's per-seed streams, and stands for the
// layer when every layer shares its variates.
constexpr uint64_t kLaborTag = 0x4c41424f52ULL;  // "LABOR"
constexpr uint64_t kEveryLayer = ~uint64_t{0};

}  // namespace

void check_labor_options(const LaborOptions& options) {
  if (options.batch_dependency < 1) {
    throw OptionError("batch_dependency",
                      fmt::format("must be at least 1 (1: new variates every batch), got {}",
                                  options.batch_dependency));
  }
  if (options.importance_sampling > kMaxImportanceRounds) {
    throw OptionError("importance_sampling",
                      fmt::format("must be at most {} rounds (negative: until converged), got {}",
                                  kMaxImportanceRounds, options.importance_sampling));
  }
}

LaborVariates labor_variates(uint64_t seed, uint64_t epoch, uint64_t batch, uint64_t layer,
                             const LaborOptions& options) {
  check_labor_options(options);
  const uint64_t layer_part = options.layer_dependency ? kEveryLayer : layer;
  const auto window_key = [&](uint64_t window) {
    return stream_key({kLaborTag, seed, epoch, window, layer_part});
  };
  const auto span = static_cast<uint64_t>(options.batch_dependency);
  LaborVariates variates{.enabled = true, .key = window_key(batch / span)};
  if (span > 1) {
    variates.blend = true;
    variates.next_key = window_key(batch / span + 1);
    variates.mix = static_cast<double>(batch % span) / static_cast<double>(span);
  }
  return variates;
}

LaborCut::LaborCut(const LaborVariates& variates, int64_t fanout, int64_t degree)
    : variates_(&variates),
      fanout_(fanout),
      degree_(degree),
      bound_(labor_keep_bound(fanout, degree)) {}

namespace {

// The plain variates' test over a run of nodes (no blend), cloned for AVX-512 hosts, where
// GCC vectorizes it (64-bit vector multiplies): kept[j] = 1 where nodes[j]'s variate is below.
template <typename Node>
void mark_below(const Node* nodes, int64_t n, uint64_t key, uint64_t bound, uint8_t* kept) {
  for (int64_t j = 0; j < n; ++j) {
    const auto node = static_cast<uint64_t>(static_cast<int64_t>(nodes[j]));
    kept[j] = (mix64(key + node * kGolden) >> 11) < bound;
  }
}

#if defined(__x86_64__)
#define GRAPHLOOM_AVX512_CLONE __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define GRAPHLOOM_AVX512_CLONE
#endif

GRAPHLOOM_AVX512_CLONE void mark_below_32(const int32_t* nodes, int64_t n, uint64_t key,
                                          uint64_t bound, uint8_t* kept) {
  mark_below(nodes, n, key, bound, kept);
}

GRAPHLOOM_AVX512_CLONE void mark_below_64(const int64_t* nodes, int64_t n, uint64_t key,
                                          uint64_t bound, uint8_t* kept) {
  mark_below(nodes, n, key, bound, kept);
}

template <typename Node>
void mark(const LaborCut& cut, const LaborVariates& variates, uint64_t bound, const Node* nodes,
          int64_t n, uint8_t* kept) {
  if (variates.blend) {
    for (int64_t j = 0; j < n; ++j) kept[j] = cut.keeps(nodes[j]);
  } else if constexpr (sizeof(Node) == 4) {
    mark_below_32(nodes, n, variates.key, bound, kept);
  } else {
    mark_below_64(nodes, n, variates.key, bound, kept);
  }
}

}  // namespace

void mark_kept(const LaborCut& cut, const int32_t* nodes, int64_t n, uint8_t* kept) {
  mark(cut, *cut.variates_, cut.bound_, nodes, n, kept);
}

void mark_kept(const LaborCut& cut, const int64_t* nodes, int64_t n, uint8_t* kept) {
  mark(cut, *cut.variates_, cut.bound_, nodes, n, kept);
}

uint64_t labor_keep_bound(int64_t fanout, int64_t degree) {
  GL_CHECK(fanout >= 0 && degree > 0,
           "LABOR: the cut needs fanout >= 0 and degree > 0, got {} and {}", fanout, degree);
  constexpr uint64_t kValues = uint64_t{1} << 53;
  const auto passes = [&](uint64_t k) {
    return static_cast<double>(k) * 0x1.0p-53 * static_cast<double>(degree) <
           static_cast<double>(fanout);
  };
  // The real boundary is fanout * 2^53 / degree. The double product's rounding error is below
  // fanout * 2^-53, so the test's boundary lies less than fanout / degree of a k from it (under
  // one where LABOR tests, degree > fanout): the search starts two below and steps up.
  const unsigned __int128 exact =
      static_cast<unsigned __int128>(fanout) * kValues / static_cast<uint64_t>(degree);
  uint64_t k = exact >= kValues ? kValues : static_cast<uint64_t>(exact);
  k = k >= 2 ? k - 2 : 0;
  while (k < kValues && passes(k)) ++k;
  return k;
}

double blended_labor_variate(const LaborVariates& variates, int64_t node) {
  // A standard normal per window by Box-Muller over two uniforms of the node's hash.
  const auto normal = [node](uint64_t key) {
    const uint64_t bits = mix64(key + static_cast<uint64_t>(node) * kGolden);
    const double u1 = static_cast<double>(bits >> 11) * 0x1.0p-53;
    const double u2 = static_cast<double>(mix64(bits) >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * std::numbers::pi * u2);
  };
  const double angle = std::numbers::pi / 2 * variates.mix;
  // A unit-norm combination of two independent standard normals is a standard normal.
  const double z =
      std::cos(angle) * normal(variates.key) + std::sin(angle) * normal(variates.next_key);
  const double u = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  return u < 1.0 ? u : std::nextafter(1.0, 0.0);
}

}  // namespace graphloom::sampling
