// Mini-batch node classification: the loop behind `graphloom train`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graphloom/dist/process_group.h"
#include "graphloom/features/feature_source.h"
#include "graphloom/io/dataset.h"
#include "graphloom/nn/model_config.h"
#include "graphloom/sampling/neighbor_source.h"
#include "graphloom/train/gradient_sync.h"
#include "graphloom/train/inference.h"

namespace graphloom::dist {
class DistEmbedding;
}  // namespace graphloom::dist

namespace graphloom::train {

struct TrainOptions {
  nn::ModelConfig model;  // in/out are taken from the dataset
  std::vector<int64_t> fanouts{10, 10, 10};
  // Typed graphs: [layer][edge type] picks overriding `fanouts` (sampling::NeighborSampler).
  std::vector<std::vector<int64_t>> edge_type_fanouts;
  int64_t batch_size = 1024;
  int64_t epochs = 10;
  double lr = 1e-3;
  double weight_decay = 0;
  int64_t patience = 0;            // stop after this many epochs without a better val acc (0: off)
  std::string eval = "full";       // full: layer-wise full-neighbor inference; sampled: fanouts
  int64_t eval_every = 1;          // validate every N epochs (the last epoch always)
  int64_t eval_batch_size = 4096;  // destinations per batch of layer-wise inference
  std::string normalize_features = "none";  // none | row
  std::string self_loops = "auto";          // auto (gcn/gat: add) | add | keep
  std::string precision = "fp32";           // fp32 | bf16 (CPU autocast of the dense layers)
  uint64_t seed = 0;
  std::filesystem::path checkpoint;   // written after every epoch (empty: none)
  bool resume = false;                // continue from `checkpoint`
  std::filesystem::path metrics_log;  // JSON lines, one per epoch (empty: none)
  int num_workers = 1;
  int prefetch = 1;
  int64_t max_batches = 0;  // per epoch, for benchmarks (0: all)
  bool progress = true;
  bool final_test = true;  // evaluate the best model on the test split at the end
  // Data-parallel runs only (a process group is given):
  GradientSyncOptions sync;
  int64_t check_sync_every = 0;     // verify identical parameters every K steps (0: off)
  bool drop_uneven_inputs = false;  // every rank runs the fewest batches any rank has
};

struct StageTimes {
  double sample = 0, fetch = 0, wait = 0, forward = 0, backward = 0, optimizer = 0;
  double allreduce = 0;  // gradient sync not hidden behind backward (data-parallel runs)
};

struct TrainResult {
  double best_val_acc = 0;
  int64_t best_epoch = -1;
  double test_acc = 0;
  double test_f1 = 0;
  int64_t epochs_run = 0;
  double seeds_per_second = 0;  // training batches only, over all epochs, all ranks
  StageTimes times;             // summed over all epochs of this run
  double train_seconds = 0;     // wall time of the training batches
  int64_t steps = 0;            // optimizer steps (data-parallel: gradient rounds)
  int64_t parameters = 0;       // model parameters (gradient floats per step)
  // TrainingInputs::epoch_counters summed over the ranks and the epochs (e.g. remote_bytes).
  std::map<std::string, double> counters;
};

// What a training run reads, whatever holds it: an in-memory dataset, or a partitioned graph
// behind graph servers (DistGraph). The sources must outlive the run.
struct TrainingInputs {
  std::string name;  // for messages
  const sampling::NeighborSource* graph = nullptr;
  const features::FeatureSource* rows = nullptr;  // "feat" (float32 [dim]) and "label"
  at::Tensor train_nodes;  // all training nodes, or this trainer's share if train_nodes_split
  bool train_nodes_split = false;
  at::Tensor valid_nodes, test_nodes;  // all of them (evaluation is split over the ranks)
  int64_t num_classes = 0;
  int64_t num_relations = 0;           // typed graphs: edge types (relational models need them)
  at::Tensor in_degrees, out_degrees;  // whole-graph degrees (GCN); undefined when unknown
  dist::DistEmbedding* embedding = nullptr;  // learnable input rows instead of "feat"
  // Where full-neighbor inference keeps each layer's output (partitioned runs: a DistTensor
  // on the graph servers); empty = tensors in this process (see layerwise_inference).
  LayerOutputFactory layer_outputs;
  // Counters of the data path since the last call (e.g. remote_bytes, cache_hits,
  // cache_misses), read when an epoch starts and after its training batches; every rank must
  // return the same keys. They are summed over the ranks into the epoch's log line.
  std::function<std::map<std::string, double>()> epoch_counters;
};

// With a process group of several ranks the run is data-parallel: every rank trains on its share
// of the training nodes, gradients are averaged (GradientSynchronizer, with Join for ranks that
// run out of batches), metrics are reduced, evaluation is split over the ranks, and only rank 0
// writes the log and checkpoints. Every rank returns the same result.
TrainResult train_node_classification(const io::Dataset& dataset, const TrainOptions& options,
                                      dist::ProcessGroup* group = nullptr);
TrainResult train_node_classification(const TrainingInputs& inputs, const TrainOptions& options,
                                      dist::ProcessGroup* group = nullptr);

}  // namespace graphloom::train
