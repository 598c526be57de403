// `graphloom bench train|data-parallel|aggregate`: end-to-end mini-batch training throughput
// with its stage split, its data-parallel scaling, and the native aggregation kernel against
// the same computation written with libtorch ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/train/train_options.h"

namespace graphloom::benchmarks {

// The benchmark's model: hidden 256, 60 batches per process; the rest TrainOptions' defaults.
inline train::TrainOptions train_bench_defaults() {
  train::TrainOptions options;
  options.model.hidden = 256;
  options.max_batches = 60;
  return options;
}

// `bench train`.
struct TrainBenchOptions {
  std::string data;  // empty: the embedded default dataset, generated in memory
  // One epoch of this run is measured: epochs, eval_every, final_test and progress are set
  // by run_train_bench.
  train::TrainOptions options = train_bench_defaults();
  std::string result_json;  // also write the figures there as JSON (for `bench data-parallel`)
};

// `bench aggregate`.
struct AggregateBenchOptions {
  std::string data;      // empty: the embedded default dataset, generated in memory
  int64_t hidden = 256;  // feature width
  int repeats = 5;       // runs; the median is reported
};

// Trains one epoch (or options.max_batches) and prints seeds/s and where the time went.
// `group`: this process's data-parallel group, or nullptr; only rank 0 prints.
void run_train_bench(const TrainBenchOptions& options, distributed::ProcessGroup* group);
// `argv`: this program's command line, a `bench data-parallel` one. Runs it as `bench train`
// with 1 process, with `nproc` processes and with `nproc` without overlap, each as a child of
// this process, and prints the comparison.
void run_data_parallel_bench(const std::vector<std::string>& argv, int nproc);
// Mean aggregation over the largest layer of a sampled block, forward and backward: the
// native kernel against index_select + index_add_.
void run_aggregate_bench(const AggregateBenchOptions& options);

}  // namespace graphloom::benchmarks
