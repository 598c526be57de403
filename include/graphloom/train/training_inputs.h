// What a training task reads, whatever holds it: an in-memory dataset (DatasetInputs) or a
// partitioned graph behind graph servers (PartitionedInputs). One struct for every task; each
// task reads its part and checks that it is there.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "graphloom/features/feature_source.h"
#include "graphloom/graph/csc_graph.h"
#include "graphloom/sampling/neighbor_source.h"
#include "graphloom/train/inference.h"
#include "graphloom/train/link_ranking.h"

namespace graphloom::distributed {
class DistEmbedding;
}  // namespace graphloom::distributed

namespace graphloom::train {

// The sources must outlive the run.
struct TrainingInputs {
  std::string name;                                 // for messages
  const sampling::NeighborSource* graph = nullptr;  // the message-passing (training) graph
  const features::FeatureSource* rows = nullptr;    // "feat" (float32 [dim]), "label"; or null
  int64_t num_nodes = 0;
  int64_t num_relations = 0;           // typed graphs: edge types (relational models need them)
  bool typed = false;                  // the graph has a schema of several types
  at::Tensor in_degrees, out_degrees;  // whole-graph degrees (GCN, degree negatives); optional
  // Partitioned graphs: learnable input rows held by the servers and updated there by a sparse
  // optimizer (DistEmbedding), instead of "feat".
  distributed::DistEmbedding* embedding = nullptr;
  // Where full-neighbor inference keeps each layer's output (partitioned runs: a DistTensor
  // on the graph servers); empty = tensors in this process (see layerwise_inference).
  LayerOutputFactory layer_outputs;
  // Counters of the data path since the last call (e.g. remote_bytes, cache_hits,
  // cache_misses), read when an epoch starts and after its training batches; every rank must
  // return the same keys. They are summed over the ranks into the epoch's log line.
  std::function<std::map<std::string, double>()> epoch_counters;

  // Node classification.
  at::Tensor train_nodes;  // all training nodes, or this trainer's share if train_nodes_split
  bool train_nodes_split = false;
  at::Tensor valid_nodes, test_nodes;  // all of them (evaluation is split over the ranks)
  int64_t num_classes = 0;
  // Temporal sampling: the int64 time of each given node (a seed's time), with `graph` sorting
  // or serving its columns by time; empty otherwise.
  RowReader node_times;

  // Link prediction.
  // "train", "valid", "valid_neg", "test", "test_neg": int64 [M, 2] pairs of global ids.
  std::map<std::string, at::Tensor> edge_splits;
  // This trainer's share of edge_splits["train"] (edge_split) as int64 row positions, or
  // undefined: the ranks split the training pairs among themselves.
  at::Tensor train_rows;
  // The int64 time of each pair of those splits that have times (Dataset::edge_split_times):
  // recency weights read "train"'s, temporal link prediction every split's it samples.
  std::map<std::string, at::Tensor> edge_split_times;
  LinkTarget target;
  // The whole graph in this process (one machine): LightGCN propagates over it and the
  // common-neighbour baseline counts on it. Null on a partitioned graph.
  const graph::CscGraph* whole_graph = nullptr;
};

}  // namespace graphloom::train
