// `bench sample --weighted`: weighted neighbor sampling against uniform in the same run.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "graphloom/benchmarks/sampling_bench.h"
#include "graphloom/io/dataset.h"

namespace graphloom::benchmarks {

// Prints seeds/s of weighted sampling beside uniform sampling with the same fanouts and seeds,
// without and with replacement (alternating rounds, medians). A graph without edge weights gets
// uniform random weights in (0, 1], drawn from options.seed.
void bench_weighted(const io::Dataset& dataset, const std::vector<at::Tensor>& seeds, int64_t total,
                    const SamplingBenchOptions& options, int threads);

}  // namespace graphloom::benchmarks
