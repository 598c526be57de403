// `bench sample --temporal`: temporal neighbor sampling against plain uniform sampling.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "graphloom/benchmarks/sampling_bench.h"
#include "graphloom/io/dataset.h"

namespace graphloom::benchmarks {

// Prints seeds/s, sampled edges and input nodes per batch of temporal sampling (strategies
// uniform and last) beside uniform sampling without times, same fanouts and seeds
// (alternating rounds, medians). Times: the dataset's node and edge timestamps, else uniform
// random edge times in [0, 2^20); seed times: the seeds' node times, else uniform random in
// that range (about half of each column usable).
void bench_temporal(const io::Dataset& dataset, const std::vector<at::Tensor>& seeds, int64_t total,
                    const SamplingBenchOptions& options, int threads);

}  // namespace graphloom::benchmarks
