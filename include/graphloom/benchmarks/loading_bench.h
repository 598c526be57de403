// `graphloom bench load|csc`: loading a dataset into a ready-to-sample CSC against DGL's figure,
// and the COO->CSC build against one std::sort of the same edges.
#pragma once

#include <string>

namespace graphloom::benchmarks {

// `bench load` and `bench csc`.
struct LoadingBenchOptions {
  std::string dir;  // dataset directory (for `csc`: one whose graph is an 'edges' array)
  int repeats = 3;  // runs; the median is reported
};

// Loads `dir` `repeats` times; prints the median next to DGL 1.1.3's figure and the peak RSS.
void run_load_bench(const LoadingBenchOptions& options);
// Builds the CSC of `dir`'s edge array and sorts the same array by (dst, src), `repeats` times.
void run_csc_bench(const LoadingBenchOptions& options);

}  // namespace graphloom::benchmarks
