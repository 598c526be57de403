// Sampling throughput as `bench sample` measures it: one single-threaded sampler per thread
// over an epoch's batches. Shared by the neighbor, tensor-op and LABOR benchmarks.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "graphloom/sampling/neighbor_sampler.h"

namespace graphloom::benchmarks {

struct SamplingFigures {
  double seconds = 0;
  int64_t batches = 0, seeds = 0, edges = 0, inputs = 0;
};

// Samples seeds[0, total) (batch i as batch i of epoch 0) on `threads` workers, after one
// warm-up batch; temporal samplers at seed_times[i] (empty: no times).
SamplingFigures measure_sampling(const sampling::NeighborSampler& sampler,
                                 const std::vector<at::Tensor>& seeds, int64_t total, int threads,
                                 const std::vector<at::Tensor>& seed_times = {});

// The median seeds/s of several runs.
double median_seeds_per_second(const std::vector<SamplingFigures>& runs);

}  // namespace graphloom::benchmarks
