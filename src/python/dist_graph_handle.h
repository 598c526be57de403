// A trainer's DistGraph with what it is built from (partition.json, the shared-memory mapping
// of this machine's part), kept alive by the Python objects that use it: the DistGraph itself,
// samplers and loaders over it.
#pragma once

#include <memory>
#include <string>

#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/graph/feature_cache.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/distributed/runtime/cluster_options.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::python {

class DistGraphHandle {
 public:
  // `cluster.machine` must be set (initialize() works it out from the ranks). With a cache
  // policy, loaders read "feat" rows through a cache of remote rows (as `train --cache-policy`).
  explicit DistGraphHandle(const distributed::ClusterOptions& cluster,
                           const distributed::FeatureCacheOptions& cache = {});
  ~DistGraphHandle();
  DistGraphHandle(const DistGraphHandle&) = delete;
  DistGraphHandle& operator=(const DistGraphHandle&) = delete;

  distributed::DistGraph& graph() const { return *graph_; }
  // The graph as a shared pointer that also keeps this handle (and so the mapping) alive.
  std::shared_ptr<distributed::DistGraph> shared_graph(
      std::shared_ptr<DistGraphHandle> self) const {
    return {std::move(self), graph_.get()};
  }
  // What loaders gather rows from: the feature cache when there is one, else the graph; it
  // keeps this handle alive too.
  std::shared_ptr<const features::FeatureSource> shared_features(
      std::shared_ptr<DistGraphHandle> self) const;
  // The cache's hits and misses (zero without a cache), reset when asked.
  features::CacheStats cache_stats(bool reset) const;
  const partition::PartitionInfo& info() const { return info_; }
  int64_t machine() const { return machine_; }
  // The relabelled global ids of split `name` ("train", ...) over every part.
  at::Tensor split(const std::string& name) const;

 private:
  partition::PartitionInfo info_;
  std::string part_config_;
  int64_t machine_ = 0;
  std::unique_ptr<distributed::SharedPartition> local_;
  std::shared_ptr<distributed::DistGraph> graph_;
  std::unique_ptr<features::CachedFeatureSource> cache_;  // declared last: destroyed first
};

}  // namespace graphloom::python
