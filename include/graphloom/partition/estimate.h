// The peak memory and wall time `graphloom partition` expects, printed before it starts (and
// alone with --estimate), so that a user can tell in advance whether a graph fits the machine
// and how long to wait.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "graphloom/partition/methods.h"

namespace graphloom::partition {

// METIS's workspace depends on how well the graph coarsens, which the headers cannot tell:
// bytes are given at the high end of what was measured (power-law graphs), `peak_low` at the
// low end (graphs of even degrees); for the other methods the two agree.
struct PartitionEstimate {
  int64_t load = 0;           // bytes: reading the dataset and building its CSC
  int64_t assign = 0;         // bytes: computing the assignment (METIS dominates)
  int64_t write = 0;          // bytes: writing the parts
  int64_t peak = 0;           // bytes: the largest of the three plus what stays loaded throughout
  int64_t peak_low = 0;       // bytes: `peak` with METIS at the low end of its range
  double seconds = 0;         // expected wall time on a 2-core host like CI's (within about 3x)
  double assign_seconds = 0;  // of which the assignment
};

// Estimates from the dataset's metadata and file headers only (nothing is loaded).
// `out_edges`: the parts also get their out-edges (`partition --out-edges`).
// `metis_recursive`: METIS by recursive bisection (else k-way).
PartitionEstimate estimate_partition(const std::filesystem::path& dataset_dir, int64_t parts,
                                     PartitionMethod method, int64_t metis_constraints,
                                     bool metis_recursive, bool out_edges = false);

}  // namespace graphloom::partition
