// A whole training run as one call: where the graph comes from (a dataset directory, the
// embedded default dataset, or a partitioned graph behind graph servers), what is trained
// (TaskKind, TrainOptions, LinkOptions), and its result. `graphloom train` is flags around it.
#pragma once

#include <string>
#include <vector>

#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/runtime/cluster_options.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/features/cached_feature_source.h"
#include "graphloom/train/link_prediction.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::train {

// Training on a partitioned graph: the partition, its servers, and this trainer's place.
// The cluster (distributed::ClusterOptions: where, token, TLS), with what the trainer keeps in
// front of it. A machine of -1 is GRAPHLOOM_MACHINE, else the rank / local world size.
struct ClusterOptions : distributed::ClusterOptions {
  distributed::SparseOptimizerOptions embed_optimizer;  // of the servers' DistEmbedding
  features::CachePolicy cache_policy = features::CachePolicy::kNone;  // remote "feat" rows
  int64_t cache_bytes = 0;
};

struct TrainJob {
  std::string data;  // dataset directory; "" (and no cluster): the embedded default dataset
  ClusterOptions cluster;
  TaskKind task = TaskKind::kNodeClassification;
  TrainOptions options;
  LinkOptions link;
  // Learnable input embeddings of this width (featureless graphs): on partitions their rows
  // live on the servers; for link prediction on a dataset, a local table.
  int64_t embed_dim = 0;
  // Typed graphs: "EDGE_TYPE=F1,F2,..." picks per layer overriding options.fanouts.
  std::vector<std::string> edge_type_fanouts;

  // OptionError naming the first field that cannot work (before anything is loaded).
  void validate() const;
};

struct TrainJobResult {
  TaskKind task = TaskKind::kNodeClassification;
  TrainResult node;  // node classification
  LinkResult link;   // link prediction
};

// Runs `job` as this process's part of the group (null: alone).
TrainJobResult run_train_job(TrainJob job, distributed::ProcessGroup* group);

}  // namespace graphloom::train
