// `bench cache`: the feature cache's eviction policies on the rows sampled epochs read.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "graphloom/benchmarks/sampling_bench.h"
#include "graphloom/io/dataset.h"
#include "graphloom/sampling/neighbor_sampler.h"

namespace graphloom::benchmarks {

// Replays the input nodes of `epochs` (each a list of batches' seeds, sampled by `sampler`)
// through a cache of each policy: the static degree cache, SIEVE, S3-FIFO, LRU and CLOCK, with
// the same byte budget. Prints each policy's hit rate and rows fetched in the last epoch (the
// first warms the cache up), its gather time per batch, and its hit rate against LRU's.
void bench_cache_policies(const io::Dataset& dataset, const sampling::NeighborSampler& sampler,
                          const std::vector<std::vector<at::Tensor>>& epochs,
                          const CacheBenchOptions& options);

}  // namespace graphloom::benchmarks
