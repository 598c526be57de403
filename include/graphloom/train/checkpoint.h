// Training checkpoints: everything needed to continue exactly where a run stopped (model,
// optimizer moments, epoch and batch, early-stopping state, the best model so far, every
// rank's dropout RNG). Written to a temporary file and renamed, so a crash never leaves a torn
// checkpoint: a reader finds the previous complete one or the new one.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <filesystem>
#include <map>
#include <vector>

namespace graphloom::train {

struct TrainState {
  int64_t epoch = -1;        // last completed epoch
  int64_t batches_done = 0;  // of epoch `epoch + 1`, when checkpointed mid-epoch
  int64_t step = 0;          // optimizer steps (gradient rounds) since the start of training
  double best_val = -1;
  int64_t best_epoch = -1;
  int64_t epochs_without_improvement = 0;
  std::vector<torch::Tensor> best_parameters;  // copy of the model at best_epoch
  // Task::external_state() at the checkpoint; filled only while saving and after loading.
  std::map<std::string, torch::Tensor> external_state;

  // Records epoch `epoch`'s validation score (higher is better): a new best keeps a copy of
  // `model`'s parameters. Returns true when `patience` > 0 evaluations' worth of epochs
  // (eval_every each) passed without improvement: time to stop early.
  bool record_validation(double score, int64_t epoch, torch::nn::Module& model, int64_t eval_every,
                         int64_t patience);
};

// `rng_states`: [ranks, bytes] uint8, row r rank r's CPU generator state.
void save_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, const TrainState& state,
                     const torch::Tensor& rng_states);

// Restores into `model`, `optimizer` and `state`; returns the ranks' generator states as saved.
// Throws graphloom::Error naming the file when it is unreadable or was written for a different
// model.
torch::Tensor load_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                              torch::optim::Optimizer& optimizer, TrainState& state);

// Copies of the model's parameters, and their restoration.
std::vector<torch::Tensor> copy_parameters(torch::nn::Module& model);
void restore_parameters(torch::nn::Module& model, const std::vector<torch::Tensor>& saved);

}  // namespace graphloom::train
