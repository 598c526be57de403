// Uniform picks without replacement within one column (or a prefix of one), internal to the
// sampling kernels: the plain and the temporal kernel draw the same numbers the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "graphloom/base/random.h"
#include "sampling_limits.h"

namespace graphloom::sampling {

// Writes `picks` distinct positions of [begin, begin + degree) to `out`, uniformly at random.
inline void pick_uniform_without_replacement(int64_t begin, int64_t degree, int64_t picks,
                                             RandomStream& rng, int64_t* out) {
  if (picks <= kFloydMaxPicks) {
    // Floyd: a uniformly random `picks`-subset of [0, degree) in `picks` draws.
    for (int64_t j = degree - picks, n = 0; j < degree; ++j, ++n) {
      const auto t = begin + static_cast<int64_t>(rng.uniform(j + 1));
      const bool seen = std::find(out, out + n, t) != out + n;
      out[n] = seen ? begin + j : t;
    }
    return;
  }
  // Partial Fisher-Yates over a reused scratch array of positions.
  thread_local std::vector<int64_t> scratch;
  scratch.resize(degree);
  for (int64_t j = 0; j < degree; ++j) scratch[j] = begin + j;
  for (int64_t j = 0; j < picks; ++j) {
    std::swap(scratch[j], scratch[j + static_cast<int64_t>(rng.uniform(degree - j))]);
    out[j] = scratch[j];
  }
}

}  // namespace graphloom::sampling
