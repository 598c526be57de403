// A trainer's DistGraph with what it is built from (partition.json, the shared-memory mapping
// of this machine's part), kept alive by the Python objects that use it: the DistGraph itself,
// samplers and loaders over it.
#pragma once

#include <memory>
#include <string>

#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/distributed/runtime/cluster_options.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::python {

class DistGraphHandle {
 public:
  // `cluster.machine` must be set (initialize() works it out from the ranks).
  explicit DistGraphHandle(const distributed::ClusterOptions& cluster);
  ~DistGraphHandle();
  DistGraphHandle(const DistGraphHandle&) = delete;
  DistGraphHandle& operator=(const DistGraphHandle&) = delete;

  distributed::DistGraph& graph() const { return *graph_; }
  // The graph as a shared pointer that also keeps this handle (and so the mapping) alive.
  std::shared_ptr<distributed::DistGraph> shared_graph(
      std::shared_ptr<DistGraphHandle> self) const {
    return {std::move(self), graph_.get()};
  }
  const partition::PartitionInfo& info() const { return info_; }
  int64_t machine() const { return machine_; }
  // The relabelled global ids of split `name` ("train", ...) over every part.
  at::Tensor split(const std::string& name) const;

 private:
  partition::PartitionInfo info_;
  std::string part_config_;
  int64_t machine_ = 0;
  std::unique_ptr<distributed::SharedPartition> local_;
  std::shared_ptr<distributed::DistGraph> graph_;  // declared last: destroyed first
};

}  // namespace graphloom::python
