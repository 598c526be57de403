// Mini-batch node classification: the loop behind `graphloom train`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/io/dataset.h"
#include "graphloom/train/train_options.h"
#include "graphloom/train/training_inputs.h"

namespace graphloom::train {

struct TrainResult {
  double best_val_acc = 0;
  int64_t best_epoch = -1;
  double test_acc = 0;
  double test_f1 = 0;
  double test_auc = -1;  // two classes: ROC-AUC (binary_roc_auc); -1 otherwise
  int64_t epochs_run = 0;
  double seeds_per_second = 0;  // training batches only, over all epochs, all ranks
  StageTimes times;             // summed over all epochs of this run
  double train_seconds = 0;     // wall time of the training batches
  int64_t steps = 0;            // optimizer steps (data-parallel: gradient rounds)
  int64_t parameters = 0;       // model parameters (gradient floats per step)
  double loss_scale = 0;        // fp16: the loss scale at the end (0 otherwise)
  // TrainingInputs::epoch_counters summed over the ranks and the epochs (e.g. remote_bytes).
  std::map<std::string, double> counters;
};

// With a process group of several ranks the run is data-parallel: every rank trains on its share
// of the training nodes, gradients are averaged (GradientSynchronizer, with Join for ranks that
// run out of batches), metrics are reduced, evaluation is split over the ranks, and only rank 0
// writes the log and checkpoints. Every rank returns the same result.
TrainResult train_node_classification(const io::Dataset& dataset, const TrainOptions& options,
                                      distributed::ProcessGroup* group = nullptr);
TrainResult train_node_classification(const TrainingInputs& inputs, const TrainOptions& options,
                                      distributed::ProcessGroup* group = nullptr);

}  // namespace graphloom::train
