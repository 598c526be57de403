// A trainer's DistGraph with what it is built from (partition.json, the shared-memory mapping
// of this machine's part), kept alive by the Python objects that use it: the DistGraph itself,
// samplers and loaders over it.
#pragma once

#include <memory>
#include <string>

#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::python {

// Where a trainer's cluster is (graphloom.distributed.initialize reads it from what `graphloom
// launch` sets).
struct ClusterConfig {
  std::string part_config;
  std::string ip_config;
  int num_servers = 1;
  int64_t machine = 0;
  std::string cluster_id;  // "": every part by RPC
  std::string token_file;  // "": GRAPHLOOM_TOKEN, else no token
  double deadline_seconds = 30;
};

class DistGraphHandle {
 public:
  explicit DistGraphHandle(const ClusterConfig& config);
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
