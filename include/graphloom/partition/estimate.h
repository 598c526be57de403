// The peak memory `graphloom partition` expects, printed before it starts (and alone with
// --estimate), so that a user can tell in advance whether a graph fits the machine.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace graphloom::partition {

struct MemoryEstimate {
  int64_t load = 0;    // reading the dataset and building its CSC
  int64_t assign = 0;  // computing the assignment (METIS dominates)
  int64_t write = 0;   // writing the parts
  int64_t peak = 0;    // the largest of the three plus what stays loaded throughout
};

// Estimates from the dataset's metadata and file headers only (nothing is loaded).
// `out_edges`: the parts also get their out-edges (`partition --out-edges`).
MemoryEstimate estimate_partition_memory(const std::filesystem::path& dataset_dir, int64_t parts,
                                         const std::string& method, int64_t metis_constraints,
                                         bool out_edges = false);

}  // namespace graphloom::partition
