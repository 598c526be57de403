// The epoch engine: one loop for every task (train/task.h). Batches come from the task's
// DataLoader; the engine runs backward, averages gradients over the ranks (with Join for
// uneven shares), steps Adam, logs each epoch (console and metrics log), validates every
// eval_every epochs, checkpoints, stops early, restores the best parameters and runs the
// task's final test.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/loader/device_stager.h"
#include "graphloom/train/checkpoint.h"
#include "graphloom/train/task.h"
#include "graphloom/train/train_options.h"

namespace torch::optim {
class Adam;
}  // namespace torch::optim

namespace graphloom::train {

class MetricsLog;
class GradScaler;

struct FitResult {
  double best_val = -1;  // the best Validation::score
  int64_t best_epoch = -1;
  int64_t epochs_run = 0;
  int64_t steps = 0;                       // optimizer steps (data-parallel: gradient rounds)
  int64_t skipped_steps = 0;               // fp16: steps skipped for inf/NaN gradients
  double loss_scale = 0;                   // fp16: the loss scale at the end (0 otherwise)
  int64_t parameters = 0;                  // model parameters (gradient floats per step)
  double items_per_second = 0;             // training items over all epochs and ranks
  double train_seconds = 0;                // wall time of the training batches (the slowest rank's)
  StageTimes times;                        // this rank's, summed over the epochs
  std::map<std::string, double> counters;  // Task::epoch_counters over the ranks and epochs
};

// The device this process trains on: options.device, a bare "cuda" mapped to this process's
// GPU by its local rank (one process per GPU). Throws OptionError("device") for a device this
// build or machine cannot use.
c10::Device training_device(const TrainOptions& options, const distributed::ProcessGroup* group);

class Trainer {
 public:
  // Seeds torch's generator with options.seed: build the task (its model) after this.
  // `epoch_counters`: the data path's counters since the last call
  // (TrainingInputs::epoch_counters), or empty.
  Trainer(const TrainOptions& options, distributed::ProcessGroup* group,
          std::function<std::map<std::string, double>()> epoch_counters = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains `task` from scratch, or from options.checkpoint when options.resume.
  FitResult fit(Task& task);

 private:
  struct EpochTotals;
  void prepare(Task& task);
  void resume(Task& task);
  at::Tensor rng_states() const;
  void checkpoint(Task& task);
  int64_t mid_epoch_checkpoint_limit(int64_t batches) const;
  int64_t batches_per_epoch(Task& task) const;
  EpochTotals train_epoch(Task& task, int64_t epoch);
  // `prefetch` stages the next batch once this step's forward is queued, so that its copy to
  // the device overlaps this step's compute.
  void train_batch(Task& task, loader::StagedBatch& batch, const std::function<void()>& prefetch,
                   EpochTotals& totals);
  void join(Task& task, EpochTotals& totals);
  void after_step();
  void reduce(EpochTotals& totals);
  nlohmann::json epoch_record(const Task& task, int64_t epoch, const EpochTotals& totals);
  bool validate(Task& task, int64_t epoch, nlohmann::json& record);

  const TrainOptions& options_;
  distributed::ProcessGroup* group_;
  std::function<std::map<std::string, double>()> epoch_counters_;
  bool main_rank_;
  loader::DeviceStager stager_;  // batches onto the training device, one step ahead
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::optional<GradientSynchronizer> sync_;
  std::unique_ptr<GradScaler> scaler_;  // fp16 only
  std::unique_ptr<MetricsLog> log_;
  TrainState state_;
  FitResult result_;
};

}  // namespace graphloom::train
