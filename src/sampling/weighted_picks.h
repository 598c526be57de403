// Weighted picks within one column (or edge-type segment) of a CSC, internal to the sampling
// kernel. A pick reads the segment's alias table (CscGraph::weight_alias): one random position
// and one coin, so a hub of degree 80k costs what a column of 20 does.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "graphloom/base/random.h"
#include "graphloom/graph/weight_alias.h"

namespace graphloom::sampling {

// Without replacement, up to this many picks are drawn by successive redraws (membership is
// checked by scanning the picks so far, O(k^2)); more by one pass of Efraimidis-Spirakis keys.
constexpr int64_t kMaxSuccessivePicks = 64;

// A positive weight in units of 2^-32 of `largest` (the segment's largest weight), rounded up
// and at least 1; 0 for a weight that is not positive. Division, a power-of-two scale and
// ceil are exact IEEE operations: the same integer on every device.
inline int64_t fixed_point_weight(double weight, double largest) {
  if (!(weight > 0)) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(weight / largest * 0x1.0p32)));
}

template <typename Weight>
class WeightedColumn {
 public:
  WeightedColumn(const Weight* weights, const int64_t* alias, int64_t begin, int64_t degree)
      : weight_(weights + begin), alias_(alias + begin), degree_(degree) {}

  // `picks` draws with replacement, each position with probability weight / total weight.
  void pick_with_replacement(int64_t picks, RandomStream& rng, int64_t* out) const {
    for (int64_t n = 0; n < picks; ++n) out[n] = pick(rng);
  }

  // `picks` distinct positions (picks <= the positive-weight edges), by successive sampling:
  // each pick is drawn by weight among the edges not picked yet. Both algorithms below draw
  // from that distribution.
  void pick_without_replacement(int64_t picks, RandomStream& rng, int64_t* out) const {
    // A local copy of the stream stays in registers: stores to `out` (int64_t) may alias its
    // uint64_t state, which would otherwise go back to memory around every pick.
    RandomStream local = rng;
    if (picks <= kMaxSuccessivePicks) {
      pick_successively(picks, local, out);
    } else {
      pick_by_keys(picks, local, out);
    }
    rng = local;
  }

 private:
  double positive(int64_t j) const {
    return weight_[j] > 0 ? static_cast<double>(weight_[j]) : 0.0;
  }

  int64_t pick(RandomStream& rng) const {
    const int64_t j = static_cast<int64_t>(rng.uniform(static_cast<uint64_t>(degree_)));
    const graph::AliasEntry entry = graph::unpack_alias_entry(alias_[j]);
    return rng.uniform_real() < entry.keep ? j : entry.other;
  }

  // A draw that repeats a pick is redrawn a few times; then the next pick is drawn from the
  // unpicked weight directly (a few heavy edges would make redraws slow).
  void pick_successively(int64_t picks, RandomStream& rng, int64_t* out) const {
    constexpr int kRedraws = 8;
    for (int64_t n = 0; n < picks; ++n) {
      int64_t j = -1;
      for (int attempt = 0; attempt < kRedraws && j < 0; ++attempt) {
        const int64_t candidate = pick(rng);
        if (std::find(out, out + n, candidate) == out + n) j = candidate;
      }
      out[n] = j >= 0 ? j : pick_unpicked(rng, out, n);
    }
  }

  // Position j with probability weight / unpicked weight, over fixed-point weights: each
  // positive weight as a multiple of 2^-32 of the segment's largest, rounded up (at least 1).
  // Integer sums are exact in any order, so the tensor sampler on a GPU, which sums in
  // parallel, draws the same pick (tensor_neighbor_source.cpp); a double sum would not.
  int64_t pick_unpicked(RandomStream& rng, const int64_t* picked, int64_t num_picked) const {
    const auto unpicked = [&](int64_t j) {
      return std::find(picked, picked + num_picked, j) == picked + num_picked;
    };
    double largest = 0;
    for (int64_t j = 0; j < degree_; ++j) largest = std::max(largest, positive(j));
    int64_t remaining = 0;
    for (int64_t j = 0; j < degree_; ++j) {
      if (unpicked(j)) remaining += fixed_point_weight(positive(j), largest);
    }
    // picks <= the positive weights, so one is left unpicked and remaining >= 1.
    auto target = static_cast<int64_t>(rng.uniform(static_cast<uint64_t>(remaining)));
    for (int64_t j = 0; j < degree_; ++j) {
      if (!unpicked(j)) continue;
      target -= fixed_point_weight(positive(j), largest);
      if (target < 0) return j;
    }
    return degree_ - 1;  // not reached: the targets sum to remaining
  }

  // Efraimidis-Spirakis: the `picks` largest keys log(u) / w, one pass over the column.
  void pick_by_keys(int64_t picks, RandomStream& rng, int64_t* out) const {
    thread_local std::vector<std::pair<double, int64_t>> keyed;
    keyed.clear();
    for (int64_t j = 0; j < degree_; ++j) {
      if (!(positive(j) > 0)) continue;
      double u = rng.uniform_real();
      while (u <= 0.0) u = rng.uniform_real();
      keyed.emplace_back(std::log(u) / positive(j), j);
    }
    std::partial_sort(keyed.begin(), keyed.begin() + picks, keyed.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    for (int64_t n = 0; n < picks; ++n) out[n] = keyed[n].second;
  }

  const Weight* weight_;
  const int64_t* alias_;
  int64_t degree_;
};

}  // namespace graphloom::sampling
