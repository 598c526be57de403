// The sampling front's limits (sampling_limits.h).
#include "sampling_limits.h"

#include <ATen/ATen.h>

#include <fmt/format.h>

#include "graphloom/base/error.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::sampling {

void check_fanout(int64_t fanout, bool replace, const char* field) {
  if (fanout < -1) {
    throw OptionError(field, fmt::format("must be -1 (all neighbors) or >= 0, got {}", fanout));
  }
  if (replace && fanout > kMaxReplacementFanout) {
    throw LimitError(field, fmt::format("with replacement must be at most {} (each seed gets "
                                        "exactly that many picks, whatever its degree), got {}",
                                        kMaxReplacementFanout, fanout));
  }
}

void sum_pick_counts(int64_t* indptr, int64_t num_seeds, int64_t fanout, int64_t max_picks) {
  for (int64_t i = 0; i < num_seeds; ++i) {
    if (__builtin_add_overflow(indptr[i], indptr[i + 1], &indptr[i + 1]) ||
        indptr[i + 1] > max_picks) {
      throw LimitError("max_picks", fmt::format("({}) is below the picks of {} seeds with "
                                                "fanout {} (passed at seed {})",
                                                max_picks, num_seeds, fanout, i + 1));
    }
  }
}

SampledEdges typed_pick_arrays(at::Tensor indptr) {
  const int64_t total = indptr[-1].item<int64_t>();
  SampledEdges out;
  out.indptr = std::move(indptr);
  out.neighbors = at::empty({total}, at::kLong);
  out.edge_ids = at::empty({total}, at::kLong);
  out.edge_types = at::empty({total}, at::kLong);
  return out;
}

void check_labor_request(const SampleOptions& options) {
  if (!options.labor.enabled) return;
  if (options.replace || options.weighted) {
    throw OptionError("sampler",
                      "LABOR samples without replacement and without edge weights "
                      "(drop --replace / --weighted, or use the neighbor sampler)");
  }
  const double mix = options.labor.mix;
  if (!(mix >= 0.0 && mix < 1.0)) {
    throw OptionError("batch_dependency",
                      fmt::format("LABOR's window position must lie in [0, 1), got {}", mix));
  }
}

}  // namespace graphloom::sampling
