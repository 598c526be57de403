// Training on a partitioned graph served by graph servers (DGL's distributed training): the
// trainer of machine m maps part m from the machine's shared memory, reaches the other parts
// through DistGraph, takes its node_split of the training nodes and runs the same loop as on
// one machine, data-parallel with the other trainers.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/rpc/graph_client.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/features/cached_feature_source.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/train/link_prediction.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::train {

struct PartitionedJob {
  std::filesystem::path partition_dir;            // the `graphloom partition` output
  std::vector<std::vector<std::string>> servers;  // addresses of each part's servers
  int64_t part = 0;                               // this trainer's machine (it holds that part)
  int64_t local_rank = 0;                         // among the trainers of this machine
  int64_t trainers_per_part = 1;
  std::string cluster_id;  // map the local part from shared memory ("": all by RPC)
  distributed::ClientOptions client;
  bool force_even = true;  // node_split: equal training nodes per trainer
  // Learnable node embeddings as the model's input (featureless graphs): their width (0: use
  // the "feat" rows) and sparse optimizer.
  int64_t embed_dim = 0;
  distributed::SparseOptimizerOptions embed_optimizer;
  // A cache of remote "feat" rows in front of the DistGraph: none, degree (static: the nodes
  // the local part's edges refer to most) or sieve (dynamic), of `cache_bytes`.
  features::CachePolicy cache_policy = features::CachePolicy::kNone;
  int64_t cache_bytes = 0;
};

// The partitioned graph of `job` as the TrainingInputs of `task`: this machine's part mapped
// from shared memory (cluster_id) or reached by RPC like the others, the servers'
// DistEmbedding (--embed-dim; featureless link prediction: 64 wide) and the feature cache the
// job asks for, and this trainer's share of the training items (node_split, edge_split).
class PartitionedInputs {
 public:
  PartitionedInputs(const PartitionedJob& job, const TrainOptions& options, TaskKind task,
                    distributed::ProcessGroup* group);
  ~PartitionedInputs();
  PartitionedInputs(const PartitionedInputs&) = delete;
  PartitionedInputs& operator=(const PartitionedInputs&) = delete;

  const TrainingInputs& inputs() const { return inputs_; }

 private:
  void make_cache(const PartitionedJob& job);
  void add_node_items(const PartitionedJob& job);
  void add_link_items(const PartitionedJob& job);

  partition::PartitionInfo info_;
  std::unique_ptr<distributed::SharedPartition> local_;
  std::unique_ptr<distributed::DistGraph> graph_;
  std::optional<distributed::DistEmbedding> embedding_;
  std::unique_ptr<features::CachedFeatureSource> cache_;
  TrainingInputs inputs_;
};

// "" when `part` is the graph `train --data` would train options.model on; else what differs
// (gcn and gat get a self-loop per node there; a partition is trained as it was partitioned)
// and how to get the same graph.
std::string self_loop_difference(const partition::Partition& part, const TrainOptions& options);

TrainResult train_on_partitions(const PartitionedJob& job, const TrainOptions& options,
                                distributed::ProcessGroup* group);

// Layer outputs of full-neighbor inference as DistTensors on the graph servers (DGL's
// DistTensor), split like the nodes: no trainer holds a whole layer. They are named per job
// (inference_tensor_name with the group's job id), so jobs sharing servers do not meet; each
// evaluation of a job reuses its tensors, which stay on the servers until they exit.
// `graph` must outlive the factory and what it makes.
LayerOutputFactory dist_tensor_outputs(distributed::DistGraph& graph,
                                       distributed::ProcessGroup* group);
std::string inference_tensor_name(const std::string& job_id, int64_t layer);

// Link prediction on a partitioned graph (the partition of a dataset with edge splits; typed
// or not): each trainer takes its share of the training pairs and samples over DistGraph; the
// input rows are "feat" through the servers, or (featureless graphs, `LinkOptions::embed_dim`)
// a DistEmbedding on the servers, updated by its owners with the job's sparse optimizer.
LinkResult train_link_on_partitions(const PartitionedJob& job, const TrainOptions& options,
                                    const LinkOptions& link, distributed::ProcessGroup* group);

}  // namespace graphloom::train
