// `graphloom bench dist`: the distributed graph on loopback against the same jobs on the local
// graph, in one run, and the RPC pull throughput of 1, 4 and 16 clients.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphloom/loader/data_loader.h"

namespace graphloom::benchmarks {

// `bench dist`.
struct DistBenchOptions {
  std::string data;   // empty: the embedded default dataset, generated in memory
  int64_t parts = 2;  // parts, each served by its own server
  std::vector<int64_t> fanouts{10, 10, 10};
  int64_t batch_size = 1024;
  int64_t batches = 50;              // batches per measurement
  int64_t pull_rows = 100000;        // rows per pull call
  int64_t pull_calls = 20;           // pull calls per client
  bool edge_ids = false;             // training's samplers drop them
  loader::DataLoaderOptions loader;  // both sides' loaders
};

// Splits the dataset into `parts` (random assignment) in a temporary directory, serves every
// part from an in-process graph server on 127.0.0.1 and maps part 0 from its main server's
// shared memory (as a trainer on machine 0 does), then times sampling and loading on the
// DistGraph against the local graph, and pulls of part 1's rows.
void run_dist_bench(const DistBenchOptions& options);

}  // namespace graphloom::benchmarks
