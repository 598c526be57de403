// `graphloom bench sample|gather|loader|cache`: throughput of neighbor sampling, feature gather and
// the whole loading pipeline, with their references measured in the same run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphloom/sampling/labor.h"

namespace graphloom::benchmarks {

// `bench sample`, and the sampling half of `bench loader`.
struct SamplingBenchOptions {
  std::string data;  // empty: the embedded default dataset, generated in memory
  std::vector<int64_t> fanouts{10, 10, 10};  // neighbors per layer, input layer first; -1 = all
  int64_t batch_size = 1024;                 // seeds per mini-batch
  int64_t batches = 200;                     // mini-batches to measure
  bool replace = false;                      // sample with replacement
  uint64_t seed = 0;
  // kLabor: LABOR measured against the neighbor sampler in the same run.
  sampling::SamplingMethod sampler = sampling::SamplingMethod::kNeighbor;
  sampling::LaborOptions labor;
  // Also measure weighted sampling against uniform, with and without replacement (the graph's
  // edge weights, or uniform random ones when it has none).
  bool weighted = false;
  // Also measure temporal sampling (both strategies) against uniform sampling without times.
  bool temporal = false;
  // Also sample with the tensor-op sampler on this device ("cpu", "cuda", "cuda:N"), against
  // the C++ kernel's figure and checked block for block against its batches; empty: no.
  std::string device;
};

// `bench gather`.
struct GatherBenchOptions {
  std::string data;       // empty: the embedded default dataset, generated in memory
  int64_t rows = 600000;  // random rows gathered per run
  int repeats = 11;       // runs; the median is reported
  // Gather from the feature file's memory map (4 KB pages) instead of the table read into
  // memory on huge pages, as training does.
  bool memory_map = false;
  // Also gather the rows onto this device ("cuda", "cuda:N") with each feature placement
  // (cpu staging, pinned zero-copy, device-resident); empty: no.
  std::string device;
  // Also read the rows from the dataset's feat.npy on each gather (features::DiskFeatureSource,
  // O_DIRECT), through io_uring and pread.
  bool disk = false;
};

// `bench loader`.
struct LoaderBenchOptions {
  SamplingBenchOptions sampling;
  int workers = 1;   // loader workers, each preparing one batch (0 = one per thread)
  int prefetch = 2;  // most batches prepared ahead of the consumer (at least `workers`)
};

// `bench cache`.
struct CacheBenchOptions {
  SamplingBenchOptions sampling;  // the sampled workload; `batches` per epoch
  double cache_fraction = 0.1;    // the cache's bytes, as a fraction of the feature table's
  int64_t epochs = 2;             // the first warms the caches up; the last is reported
};

// Seeds/s and sampled edges/s of one single-threaded sampler per thread; on a typed graph,
// also the same graph without edge types.
void run_sample_bench(const SamplingBenchOptions& options);
// Random-row gather of "feat" against a sequential copy of the same bytes, then (float32
// tables) the same rows from float16, bfloat16 and int8 copies decoded to float32.
void run_gather_bench(const GatherBenchOptions& options);
// Batches/s of the DataLoader (sample + gather features and labels) with a no-op consumer.
void run_loader_bench(const LoaderBenchOptions& options);
// The feature cache's policies (degree, sieve, s3-fifo, lru, clock) on the rows that sampled
// epochs read: hit rates with the same budget, against LRU's.
void run_cache_bench(const CacheBenchOptions& options);

}  // namespace graphloom::benchmarks
