// A `graphloom partition` run: a loaded dataset's nodes assigned to parts (METIS, streaming or
// random), the parts written (partition_format.h).
#pragma once

#include <cstdint>
#include <string>

#include "graphloom/io/dataset.h"
#include "graphloom/partition/estimate.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::partition {

struct PartitionJob {
  std::string data;  // dataset directory (for the memory estimate)
  std::string out;   // partition directory to write
  int64_t parts = 2;
  PartitionMethod method = PartitionMethod::kMetis;
  StreamAlgorithm stream_algorithm = StreamAlgorithm::kFennel;  // stream
  MetisScheme metis_scheme = MetisScheme::kAuto;                // metis
  bool balance_train = false;  // metis, stream: spread train nodes evenly too
  bool balance_edges = false;  // metis, stream: balance in-edges per part too
  uint64_t seed = 0;
  int64_t halo = 0;          // record the 1-hop in-neighbors owned by other parts (0 or 1)
  bool out_edges = false;    // also store each part's out-edges
  bool force = false;        // replace `out` if it exists
  std::string command_line;  // recorded in partition.json
};

// The expected peak memory and time of the job, before loading anything.
PartitionEstimate estimate_job(const PartitionJob& job);
// Partitions `dataset` (loaded from job.data, its features encoded as they are to be stored);
// returns what partition.json records.
PartitionInfo partition_dataset(const io::Dataset& dataset, const PartitionJob& job);

}  // namespace graphloom::partition
