// distributed::Cluster: a trainer's connection to its cluster, made in one place for the C++
// trainer and the Python package. It owns the partition book (partition.json), this machine's
// part mapped from the servers' shared memory, the DistGraph over every part's servers (token
// and TLS from the ClusterOptions), the cache of remote "feat" rows in front of it, and reads
// the splits.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/graph/feature_cache.h"
#include "graphloom/distributed/graph/node_split.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/distributed/runtime/cluster_options.h"
#include "graphloom/distributed/runtime/process_environment.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::distributed {

// This trainer's machine (its line of the ip config): options.machine when set, else
// GRAPHLOOM_MACHINE, else its node rank (rank / local world size).
int machine_of(const ClusterOptions& options, const ProcessEnvironment& env);

class Cluster {
 public:
  // Connects as machine `machine` (machine_of) to the servers of `options.ip_config`, maps
  // that machine's part when `options.cluster_id` names the servers' shared memory, and keeps
  // a cache of remote "feat" rows when `cache` asks for one. Throws graphloom::Error naming the
  // file when the partition and the ip config disagree, RangeError for a machine without part.
  Cluster(const ClusterOptions& options, int machine, const FeatureCacheOptions& cache = {});
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  const partition::PartitionInfo& info() const { return info_; }
  const std::filesystem::path& partition_dir() const { return partition_dir_; }
  int64_t machine() const { return machine_; }
  DistGraph& graph() const { return *graph_; }
  // This machine's part, mapped from shared memory; null when every part is reached by RPC.
  const partition::Partition* local_part() const;
  // What input rows are read from: the feature cache when there is one, else the graph.
  const features::FeatureSource& rows() const;
  // The cache's hits and misses (zero without a cache), reset when asked.
  features::CacheStats cache_stats(bool reset) const;
  // The relabelled global ids of node split `name` ("train", "valid", "test") over every part.
  at::Tensor split(const std::string& name) const;
  // This trainer's share of items keyed by node (node_split.h: node or edge_split): the
  // positions in `item_nodes` that trainer `local_rank` of this machine's `trainers_per_part`
  // trains on.
  at::Tensor split_items(const at::Tensor& item_nodes, int64_t local_rank,
                         int64_t trainers_per_part, const SplitOptions& options = {}) const;

 private:
  partition::PartitionInfo info_;
  std::filesystem::path partition_dir_;
  int64_t machine_ = 0;
  std::unique_ptr<SharedPartition> local_;
  std::unique_ptr<DistGraph> graph_;
  std::unique_ptr<features::CachedFeatureSource> cache_;  // declared last: destroyed first
};

}  // namespace graphloom::distributed
