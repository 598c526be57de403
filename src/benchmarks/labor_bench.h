// `bench sample --sampler labor`: LABOR against the neighbor sampler in the same run.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "graphloom/benchmarks/sampling_bench.h"
#include "graphloom/io/dataset.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::benchmarks {

// Prints, LABOR beside the neighbor sampler with the same fanouts (alternating rounds,
// medians): input nodes, sampled edges and seeds/s per batch; the first hop's distinct nodes
// against the closed form of each sampler; and the feature bytes an epoch fetches through a
// SIEVE cache of 10% of the rows.
void bench_labor(const io::Dataset& dataset, const sampling::NeighborSource& source,
                 const std::vector<at::Tensor>& seeds, int64_t total,
                 const SamplingBenchOptions& options, int threads);

}  // namespace graphloom::benchmarks
