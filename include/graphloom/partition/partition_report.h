// What a partitioning produced and what it is expected to cost, as the text that `graphloom
// partition`, `graphloom inspect` and `graphloom.partition(verbose=True)` print.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphloom/partition/estimate.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::partition {

// max / mean of a per-part count (1.0 = perfectly balanced; 1.0 for no counts or all zero).
double imbalance(const std::vector<int64_t>& counts);

// The parts' table: node range, nodes, edges and train nodes per part, edge cut, imbalance.
std::string describe_partition(const PartitionInfo& info);

// "expected peak memory 4.2 GB (load ..., assign ..., write ... GB ...); expected time ...".
std::string describe_estimate(const PartitionEstimate& estimate);

}  // namespace graphloom::partition
