// Cluster: the partition book, the mapped local part, DistGraph, the feature cache, the splits.
#include "graphloom/distributed/graph/cluster.h"

#include <ATen/ATen.h>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/distributed/runtime/ip_config.h"

namespace graphloom::distributed {

int machine_of(const ClusterOptions& options, const ProcessEnvironment& env) {
  if (options.machine >= 0) return options.machine;
  if (const int from_environment = ClusterOptions::from_environment().machine;
      from_environment >= 0) {
    return from_environment;
  }
  return env.local_world_size > 0 ? env.rank / env.local_world_size : 0;
}

Cluster::Cluster(const ClusterOptions& options, int machine, const FeatureCacheOptions& cache)
    : info_(partition::read_partition_info(options.part_config)),
      partition_dir_(options.part_config),
      machine_(machine) {
  const auto servers = read_ip_config(options.ip_config, options.servers_per_machine);
  GL_CHECK(static_cast<int64_t>(servers.size()) == info_.num_parts,
           "'{}' has {} parts but the ip config '{}' lists {} machines", options.part_config,
           info_.num_parts, options.ip_config, servers.size());
  GL_CHECK_AS(RangeError, machine_ >= 0 && machine_ < info_.num_parts,
              "machine {} has no part ('{}' has {} parts)", machine_, options.part_config,
              info_.num_parts);
  const ClientOptions client = options.client_options();
  if (!options.cluster_id.empty()) {
    local_ = SharedPartition::attach(options.cluster_id, machine_, client.deadline);
  }
  graph_ = std::make_unique<DistGraph>(servers, client, local_part());
  cache_ =
      make_feature_cache(*graph_, cache, info_.num_nodes, local_part(), partition_dir_, machine_);
}

Cluster::~Cluster() = default;

const partition::Partition* Cluster::local_part() const {
  return local_ ? &local_->part() : nullptr;
}

const features::FeatureSource& Cluster::rows() const {
  if (cache_) return *cache_;
  return *graph_;
}

features::CacheStats Cluster::cache_stats(bool reset) const {
  return cache_ ? cache_->stats(reset) : features::CacheStats{};
}

at::Tensor Cluster::split(const std::string& name) const {
  std::vector<at::Tensor> ids;
  for (int64_t part = 0; part < info_.num_parts; ++part) {
    ids.push_back(partition::load_partition_split(partition_dir_, info_, part, name));
  }
  return at::cat(ids);
}

at::Tensor Cluster::split_items(const at::Tensor& item_nodes, int64_t local_rank,
                                int64_t trainers_per_part, const SplitOptions& options) const {
  return distributed::split_items(item_nodes, graph_->book(), machine_, local_rank,
                                  trainers_per_part, options);
}

}  // namespace graphloom::distributed
