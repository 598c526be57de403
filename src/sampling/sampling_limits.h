// The sampling front's limits (internal to the sampling module): the bound on fanouts with
// replacement, the overflow-checked pick budget of one call (SampleOptions::max_picks), and
// the switch between the two algorithms both uniform kernels (C++ and tensor ops) share.
#pragma once

#include <cstdint>

#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::sampling {

// Without replacement, up to this many picks are drawn by Floyd's algorithm (which checks
// membership by scanning the picks so far, O(k^2): best for small k), more by a partial
// Fisher-Yates. The tensor sampler follows the same switch to draw the same numbers.
constexpr int64_t kFloydMaxPicks = 64;

// OptionError for a fanout below -1, LimitError (naming `field`) for one with replacement above
// kMaxReplacementFanout.
void check_fanout(int64_t fanout, bool replace, const char* field);

// Turns the per-seed pick counts in indptr[1..] into offsets, refusing a total over
// `max_picks` (or past int64) with LimitError before the caller allocates the output: the
// counts come from the request (with replacement, seeds x fanout), not from the graph.
void sum_pick_counts(int64_t* indptr, int64_t num_seeds, int64_t fanout, int64_t max_picks);

// A typed kernel's output for `indptr` (offsets, as sum_pick_counts leaves them): the picks'
// neighbors, edge ids and edge types, allocated for its last offset, to be filled.
SampledEdges typed_pick_arrays(at::Tensor indptr);

// OptionError unless a LABOR call (options.labor.enabled) samples without replacement and
// weights and its mix lies in [0, 1) (it may come from the network).
void check_labor_request(const SampleOptions& options);

}  // namespace graphloom::sampling
