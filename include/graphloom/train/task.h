// A training task (node classification, link prediction, ...): what the epoch engine
// (train::Trainer) asks of it. The engine owns everything tasks share: the optimizer, resume,
// gradient sync and Join, the evaluation cadence, checkpoints, early stopping, the best
// parameters and the final test. A task owns its model, its loader, its loss and its metrics.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "graphloom/loader/data_loader.h"

namespace graphloom::train {

// What one training batch produced.
struct StepOutput {
  torch::Tensor loss;  // the batch's mean loss, with its autograd graph
  int64_t items = 0;   // seeds, or positive pairs: the batch's weight in the epoch's means
  // Per-item metric sums (e.g. "train_acc": correct predictions); the epoch logs sum / items.
  std::map<std::string, double> sums;
};

// A validation score (higher is better): early stopping and the best model follow `score`,
// which the engine logs as TaskNames::validation_key.
struct Validation {
  double score = 0;
  nlohmann::json fields = nlohmann::json::object();  // more figures for the log, e.g. val_f1
};

// How the engine names a task's figures in its log lines.
struct TaskNames {
  std::string items;           // the unit of throughput: "seeds", "edges"
  std::string validation_key;  // the record's field of Validation::score: "val_acc"
  std::string validation;      // its console name: "val acc"
  std::string score;           // the score in words, for early stopping: "validation accuracy"
  // StepOutput::sums keys and their console names, e.g. {"train_acc", "train acc"}.
  std::vector<std::pair<std::string, std::string>> train_metrics;
};

class Task {
 public:
  virtual ~Task() = default;
  virtual const TaskNames& names() const = 0;
  // Everything trained, checkpointed and restored.
  virtual torch::nn::Module& model() = 0;
  // The training batches.
  virtual loader::DataLoader& loader() = 0;
  // Forward and loss of one batch (the engine runs backward and the optimizer): `host` as the
  // loader made it, `on_device` its copy on the training device (the same batch on the CPU).
  virtual StepOutput step(const sampling::MiniBatch& host,
                          const sampling::MiniBatch& on_device) = 0;
  // After the optimizer's step, with the host batch: updates the engine does not see (a
  // DistEmbedding's rows).
  virtual void after_step(const sampling::MiniBatch& /*batch*/) {}
  // What the task trains outside model(), by name: a DistEmbedding's rows and its optimizer's
  // state on the servers. Rank 0 saves it into every checkpoint and puts it back on resume
  // while the other ranks wait, so that a resumed run continues from the checkpoint's values.
  virtual std::map<std::string, torch::Tensor> external_state() { return {}; }
  virtual void restore_external_state(const std::map<std::string, torch::Tensor>& /*state*/) {}
  // Collective in data-parallel runs: every rank calls them, and gets the same figures.
  virtual Validation validate() = 0;
  // At the end, on the best parameters; the task keeps its test figures.
  virtual void test() = 0;
};

}  // namespace graphloom::train
