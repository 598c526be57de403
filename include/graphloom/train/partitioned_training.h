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

#include "graphloom/distributed/graph/cluster.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/train/link_prediction.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::train {

struct PartitionedJob {
  // The partition, its servers' ip config, the cluster id whose shared memory holds this
  // machine's part (empty: every part by RPC), the token and TLS files.
  distributed::ClusterOptions cluster;
  int machine = 0;         // this trainer's (distributed::machine_of): it holds that part
  int64_t local_rank = 0;  // among the trainers of this machine
  int64_t trainers_per_part = 1;
  bool force_even = true;  // node_split: equal training nodes per trainer
  // Learnable node embeddings as the model's input (featureless graphs): their width (0: use
  // the "feat" rows) and sparse optimizer.
  int64_t embed_dim = 0;
  distributed::SparseOptimizerOptions embed_optimizer;
  // A cache of remote "feat" rows in front of the DistGraph: none, degree (static: the nodes
  // the local part's edges refer to most) or sieve (dynamic), of `cache.bytes`.
  distributed::FeatureCacheOptions cache;
};

// The partitioned graph of `job` as the TrainingInputs of `task`: its distributed::Cluster
// (this machine's part mapped from shared memory or reached by RPC like the others, the
// feature cache the job asks for), the servers' DistEmbedding (--embed-dim; featureless link
// prediction: 64 wide), and this trainer's share of the training items (node/edge_split).
class PartitionedInputs {
 public:
  PartitionedInputs(const PartitionedJob& job, const TrainOptions& options, TaskKind task,
                    distributed::ProcessGroup* group);
  ~PartitionedInputs();
  PartitionedInputs(const PartitionedInputs&) = delete;
  PartitionedInputs& operator=(const PartitionedInputs&) = delete;

  const TrainingInputs& inputs() const { return inputs_; }

 private:
  void add_node_items(const PartitionedJob& job);
  void add_link_items(const PartitionedJob& job);

  distributed::Cluster cluster_;
  std::optional<distributed::DistEmbedding> embedding_;
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
