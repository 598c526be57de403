// The options of a training run, whatever its task.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "graphloom/nn/model_config.h"
#include "graphloom/train/gradient_sync.h"

namespace graphloom::train {

enum class TaskKind { kNodeClassification, kLinkPrediction };

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

}  // namespace graphloom::train
