// The epoch engine: batches -> step -> backward -> gradient sync -> Adam, then the epoch's
// figures reduced over the ranks, validation, the log line, the checkpoint, early stopping.
#include "graphloom/train/trainer.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <vector>

#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/base/progress.h"
#include "graphloom/base/timer.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/train/grad_scaler.h"
#include "graphloom/train/gradient_sync.h"
#include "graphloom/train/metrics_log.h"
#include "graphloom/train/result_report.h"

namespace graphloom::train {
namespace {

// Sums `values` over the ranks (in place; a no-op for a single process).
void reduce_sums(std::vector<double>& values, distributed::ProcessGroup* group) {
  if (!data_parallel(group)) return;
  at::Tensor sums = at::tensor(values, at::kDouble);
  group->allreduce(sums);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = sums[i].item<double>();
}

// Sums a map's values over the ranks; every rank holds the same keys.
void reduce_sums(std::map<std::string, double>& values, distributed::ProcessGroup* group) {
  std::vector<double> flat;
  for (const auto& [name, value] : values) flat.push_back(value);
  reduce_sums(flat, group);
  std::size_t i = 0;
  for (auto& [name, value] : values) value = flat[i++];
}

void add_times(StageTimes& into, const StageTimes& t) {
  into.sample += t.sample, into.fetch += t.fetch, into.wait += t.wait;
  into.forward += t.forward, into.backward += t.backward;
  into.optimizer += t.optimizer, into.allreduce += t.allreduce;
}

// Fewer optimizer steps than this in a whole run rarely fit a model (e.g. 160 training nodes in
// one default batch for 10 epochs: 10 steps).
constexpr int64_t kFewSteps = 100;

// A warning when the run will take very few optimizer steps, saying what to raise.
void warn_on_few_steps(int64_t batches_per_epoch, int64_t epochs, const TrainOptions& options) {
  const int64_t steps = batches_per_epoch * epochs;
  if (epochs <= 0 || steps >= kFewSteps) return;
  const int64_t epochs_needed =
      (kFewSteps + batches_per_epoch - 1) / std::max<int64_t>(batches_per_epoch, 1);
  spdlog::warn(
      "this run takes only {} optimizer steps ({} batch(es) of up to {} per epoch x {} "
      "epochs): too few for most models to fit. Raise the epochs (about {} for {} steps) or "
      "lower the batch size",
      steps, batches_per_epoch, options.batch_size, epochs,
      epochs_needed + (options.epochs - epochs), kFewSteps);
}

// The checkpoint's entry of the fp16 loss scale: [scale, growth tracker] float64.
constexpr const char* kGradScalerState = "grad_scaler";

std::vector<at::Tensor> grads_of(torch::nn::Module& model) {
  std::vector<at::Tensor> grads;
  for (const auto& parameter : model.parameters()) grads.push_back(parameter.grad());
  return grads;
}

}  // namespace

struct Trainer::EpochTotals {
  int64_t first_batch = 0;  // > 0 in an epoch resumed mid-way
  StageTimes times;
  double loss_sum = 0;  // loss x items
  int64_t items = 0;
  std::map<std::string, double> sums;  // StepOutput::sums
  std::map<std::string, double> counters;
  double seconds = 0;
  std::optional<ProgressBar> progress;
};

Trainer::Trainer(const TrainOptions& options, distributed::ProcessGroup* group,
                 std::function<std::map<std::string, double>()> epoch_counters)
    : options_(options),
      group_(group),
      epoch_counters_(std::move(epoch_counters)),
      main_rank_(!data_parallel(group) || group->rank() == 0),
      stager_((options.validate(), training_device(options, group))) {
  torch::manual_seed(options_.seed);
}

Trainer::~Trainer() = default;

// The optimizer, the resumed state and the gradient synchronizer.
void Trainer::prepare(Task& task) {
  torch::nn::Module& model = task.model();
  optimizer_ = std::make_unique<torch::optim::Adam>(
      model.parameters(),
      torch::optim::AdamOptions(options_.lr).weight_decay(options_.weight_decay));
  for (const auto& parameter : model.parameters()) result_.parameters += parameter.numel();
  if (options_.precision == Precision::kFp16) {
    scaler_ =
        std::make_unique<GradScaler>(options_.loss_scaling, training_device(options_, group_));
  }
  if (options_.resume) resume(task);
  if (data_parallel(group_)) {
    sync_.emplace(model.parameters(), *group_, options_.sync);
    sync_->broadcast_parameters(0);  // identical replicas whatever each rank initialised
    if (main_rank_) {
      spdlog::info("data-parallel over {} ranks: {} gradient buckets through {}",
                   group_->world_size(), sync_->num_buckets(), sync_->backend_name());
    }
  }
  log_ = std::make_unique<MetricsLog>(main_rank_ ? options_.metrics_log : std::filesystem::path(),
                                      /*append=*/options_.resume);
  if (main_rank_) {
    warn_on_few_steps(batches_per_epoch(task), options_.epochs - (state_.epoch + 1), options_);
  }
}

// Restores the checkpoint, the task's external state and this rank's generator (dropout draws
// continue as they would have).
void Trainer::resume(Task& task) {
  const at::Tensor states = load_checkpoint(options_.checkpoint, task.model(), *optimizer_, state_);
  // Every rank reads the loss scale; the rest of the external state is the task's.
  if (const auto found = state_.external_state.find(kGradScalerState);
      found != state_.external_state.end()) {
    if (scaler_) scaler_->load(found->second[0].item<double>(), found->second[1].item<int64_t>());
    state_.external_state.erase(found);
  }
  if (main_rank_ && !state_.external_state.empty()) {
    task.restore_external_state(state_.external_state);
    std::vector<std::string> names;
    for (const auto& [name, tensor] : state_.external_state) names.push_back(name);
    spdlog::info("restored {} from the checkpoint", fmt::join(names, ", "));
  }
  state_.external_state.clear();
  if (data_parallel(group_)) group_->barrier();  // nobody reads the external state before that
  const int ranks = data_parallel(group_) ? group_->world_size() : 1;
  const int rank = data_parallel(group_) ? group_->rank() : 0;
  if (main_rank_ && states.size(0) != ranks) {
    spdlog::warn(
        "checkpoint '{}' was written by {} rank(s), this run has {}: dropout draws will "
        "differ from an uninterrupted run",
        options_.checkpoint.string(), states.size(0), ranks);
  }
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  generator.set_state(states[rank % states.size(0)].clone());
  if (!main_rank_) return;
  const std::string within =
      state_.batches_done > 0
          ? fmt::format(" and {} batch(es) of epoch {}", state_.batches_done, state_.epoch + 2)
          : "";
  spdlog::info("resumed from '{}' after epoch {}{} (step {})", options_.checkpoint.string(),
               state_.epoch + 1, within, state_.step);
}

// Every rank's generator state, [ranks, bytes]: a collective, so every rank calls it.
at::Tensor Trainer::rng_states() const {
  const at::Tensor own = at::detail::getDefaultCPUGenerator().get_state();
  if (!data_parallel(group_)) return own.unsqueeze(0);
  at::Tensor all = at::zeros({group_->world_size(), own.numel()}, at::kDouble);
  all[group_->rank()].copy_(own.to(at::kDouble));
  group_->allreduce(all);
  return all.to(at::kByte);
}

// Rank 0 writes the checkpoint with every rank's generator; every rank calls it.
void Trainer::checkpoint(Task& task) {
  if (options_.checkpoint.empty()) return;
  const at::Tensor states = rng_states();  // also: every rank has finished the same step
  if (main_rank_) {
    state_.external_state = task.external_state();
    if (scaler_) {
      state_.external_state[kGradScalerState] = at::tensor(
          {scaler_->current_scale(), static_cast<double>(scaler_->growth_tracker())}, at::kDouble);
    }
    try {
      save_checkpoint(options_.checkpoint, task.model(), *optimizer_, state_, states);
    } catch (const Error& e) {
      // The previous checkpoint is intact and no temporary is left: training can go on, and
      // the next checkpoint tries again.
      state_.external_state.clear();
      if (options_.on_checkpoint_failure == CheckpointFailure::kStop) throw;
      spdlog::warn(
          "{} (training goes on; the last checkpoint written is kept, the next one "
          "retries; --on-checkpoint-failure stop ends the run instead)",
          e.what());
    }
    state_.external_state.clear();
  }
  // No rank updates the external state (the servers' embedding) before rank 0 has read it.
  if (data_parallel(group_)) group_->barrier();
}

// Mid-epoch checkpoints happen only after batches every rank trains (a rank already in Join
// would not join the collective): below the fewest batches any rank has this epoch.
int64_t Trainer::mid_epoch_checkpoint_limit(int64_t batches) const {
  if (options_.checkpoint_every == 0 || !data_parallel(group_)) return batches;
  at::Tensor fewest = at::full({1}, static_cast<double>(batches), at::kDouble);
  group_->allreduce(fewest, distributed::ReduceOp::kMin);
  return static_cast<int64_t>(fewest.item<double>());
}

// The loader's batches, or options.max_batches of them.
int64_t Trainer::batches_per_epoch(Task& task) const {
  const int64_t batches = task.loader().num_batches();
  return options_.max_batches > 0 ? std::min(options_.max_batches, batches) : batches;
}

FitResult Trainer::fit(Task& task) {
  prepare(task);
  for (int64_t epoch = state_.epoch + 1; epoch < options_.epochs; ++epoch) {
    EpochTotals totals = train_epoch(task, epoch);
    nlohmann::json record = epoch_record(task, epoch, totals);
    const bool last = epoch + 1 == options_.epochs;
    bool stop = false;
    if (options_.eval_every > 0 && ((epoch + 1) % options_.eval_every == 0 || last)) {
      stop = validate(task, epoch, record);
    }
    stop = rank0_decides(stop, group_);
    state_.epoch = epoch;
    state_.batches_done = 0;
    log_->write(record);
    if (main_rank_) spdlog::info("{}", describe_epoch(task.names(), epoch, record));
    checkpoint(task);
    if (stop) {
      if (main_rank_)
        spdlog::info("early stopping: no better {} for {} epochs", task.names().score,
                     options_.patience);
      break;
    }
  }
  result_.items_per_second =
      result_.train_seconds > 0 ? result_.items_per_second / result_.train_seconds : 0;
  result_.best_val = state_.best_val;
  result_.best_epoch = state_.best_epoch;
  if (scaler_) result_.loss_scale = scaler_->current_scale();
  if (options_.final_test) {
    if (!state_.best_parameters.empty()) restore_parameters(task.model(), state_.best_parameters);
    task.test();
  }
  return result_;
}

Trainer::EpochTotals Trainer::train_epoch(Task& task, int64_t epoch) {
  task.model().train();
  if (epoch_counters_) epoch_counters_();  // drop what evaluation moved
  loader::DataLoader& loader = task.loader();
  const int64_t batches = batches_per_epoch(task);
  EpochTotals totals;
  totals.first_batch = std::min(state_.batches_done, batches);
  loader.start_epoch(static_cast<uint64_t>(epoch), totals.first_batch);
  const int64_t checkpoint_limit = mid_epoch_checkpoint_limit(batches);
  // Every metric on every rank, also on one without batches: the ranks reduce the same values.
  for (const auto& [key, name] : task.names().train_metrics) totals.sums[key] = 0;
  if (options_.progress && main_rank_) {
    totals.progress.emplace(fmt::format("epoch {}/{}", epoch + 1, options_.epochs),
                            batches - totals.first_batch, "batches");
  }
  Timer epoch_timer;
  std::optional<loader::StagedBatch> next;
  const auto fetch = [&] {
    Timer timer;
    next = stager_.stage(loader.next());
    totals.times.wait += timer.seconds();
  };
  if (totals.first_batch < batches) fetch();
  for (int64_t b = totals.first_batch; b < batches && next; ++b) {
    loader::StagedBatch batch = std::move(*next);
    next.reset();
    train_batch(
        task, batch,
        [&] {
          if (b + 1 < batches) fetch();
        },
        totals);
    state_.batches_done = b + 1;
    if (options_.checkpoint_every > 0 && state_.step % options_.checkpoint_every == 0 &&
        b + 1 < checkpoint_limit) {
      checkpoint(task);
    }
  }
  join(task, totals);
  totals.seconds = epoch_timer.seconds();
  if (totals.progress) totals.progress->finish();
  reduce(totals);
  return totals;
}

void Trainer::train_batch(Task& task, loader::StagedBatch& staged,
                          const std::function<void()>& prefetch, EpochTotals& totals) {
  const sampling::MiniBatch& batch = staged.host;
  StageTimes& t = totals.times;
  t.sample += batch.sample_seconds;
  t.fetch += batch.fetch_seconds;
  Timer timer;
  StepOutput out;
  double backward_seconds = 0;
  try {
    out = task.step(batch, stager_.ready(staged));
    t.forward += timer.seconds();
    timer.reset();
    optimizer_->zero_grad();
    (scaler_ ? scaler_->scale(out.loss) : out.loss).backward();
    // Once backward is queued (a step may have read a metric from the device already, which
    // waits for its forward), so that the next batch's copy overlaps it.
    backward_seconds = timer.seconds();
    prefetch();  // counted as waiting for batches
  } catch (const c10::OutOfMemoryError& e) {
    const std::string what = e.what_without_backtrace();
    throw Error(
        fmt::format("out of memory on {} in a training step ({}): lower --batch-size, "
                    "--fanouts or --hidden, or try --precision bf16",
                    options_.device, what.substr(0, what.find('\n'))));
  }
  t.backward += backward_seconds;
  if (sync_) {
    timer.reset();
    sync_->synchronize();
    t.allreduce += timer.seconds();
  }
  timer.reset();
  // fp16: the gradients are unscaled after the sync, so every rank skips the same steps.
  if (!scaler_ || scaler_->unscale(grads_of(task.model()))) {
    optimizer_->step();
    task.after_step(batch);
  } else {
    ++result_.skipped_steps;
  }
  if (scaler_) scaler_->update();
  t.optimizer += timer.seconds();
  after_step();
  const double loss = out.loss.item<double>();
  totals.loss_sum += loss * static_cast<double>(out.items);
  totals.items += out.items;
  for (const auto& [name, sum] : out.sums) {
    GL_CHECK(totals.sums.count(name), "task metric '{}' is not among its TaskNames", name);
    totals.sums[name] += sum;
  }
  if (totals.progress) {
    totals.progress->set_status(fmt::format("loss {:.4f}", loss));
    totals.progress->advance(1, out.items);
  }
}

// Join: shadow the others' steps (zero gradients, weight 0) until every rank is done.
void Trainer::join(Task& task, EpochTotals& totals) {
  if (!sync_) return;
  Timer timer;
  while (sync_->join() > 0) {
    // The shadow step gets the others' averaged gradients: under fp16 it unscales and skips
    // exactly as they do, so that every rank's scale stays the same.
    if (!scaler_ || scaler_->unscale(grads_of(task.model()))) optimizer_->step();
    if (scaler_) scaler_->update();
    after_step();
  }
  totals.times.allreduce += timer.seconds();
}

// Counts the step; --check-sync: the replicas must stay bitwise identical.
void Trainer::after_step() {
  ++result_.steps;
  ++state_.step;
  if (sync_ && options_.check_sync_every > 0 && result_.steps % options_.check_sync_every == 0) {
    sync_->check_parameters_in_sync(result_.steps);
  }
}

// The epoch's figures over all ranks (every rank then reports the same), added to the result.
void Trainer::reduce(EpochTotals& totals) {
  if (epoch_counters_) totals.counters = epoch_counters_();
  reduce_sums(totals.counters, group_);
  for (const auto& [name, value] : totals.counters) result_.counters[name] += value;
  if (data_parallel(group_)) {  // the slowest rank's time
    at::Tensor slowest = at::full({1}, totals.seconds, at::kDouble);
    group_->allreduce(slowest, distributed::ReduceOp::kMax);
    totals.seconds = slowest.item<double>();
  }
  std::vector<double> values{totals.loss_sum, static_cast<double>(totals.items)};
  for (const auto& [name, sum] : totals.sums) values.push_back(sum);
  reduce_sums(values, group_);
  totals.loss_sum = values[0];
  totals.items = static_cast<int64_t>(values[1]);
  std::size_t i = 2;
  for (auto& [name, sum] : totals.sums) sum = values[i++];
  result_.train_seconds += totals.seconds;
  result_.items_per_second += static_cast<double>(totals.items);  // divided at the end
  add_times(result_.times, totals.times);
  ++result_.epochs_run;
}

nlohmann::json Trainer::epoch_record(const Task& task, int64_t epoch, const EpochTotals& totals) {
  const StageTimes& t = totals.times;
  const auto items = static_cast<double>(std::max<int64_t>(totals.items, 1));
  nlohmann::json record = {{"epoch", epoch},
                           {"loss", totals.loss_sum / items},
                           {task.names().items + "_per_s", totals.items / totals.seconds},
                           {"time", stage_times_json(t)}};
  record["time"]["train"] = totals.seconds;
  for (const auto& [name, sum] : totals.sums) record[name] = sum / items;
  // The epoch's figures then cover only the batches after the resume.
  if (totals.first_batch > 0) record["resumed_at_batch"] = totals.first_batch;
  const std::map<std::string, double>& counters = totals.counters;
  if (!counters.empty()) record["io"] = counters;
  if (counters.count("cache_hits")) {
    const double hits = counters.at("cache_hits");
    const double lookups = hits + counters.at("cache_misses");
    record["cache_hit_rate"] = lookups > 0 ? hits / lookups : 0.0;
  }
  return record;
}

// Validates; returns true when early stopping says stop.
bool Trainer::validate(Task& task, int64_t epoch, nlohmann::json& record) {
  Timer timer;
  const Validation validation = task.validate();
  record[task.names().validation_key] = validation.score;
  record.update(validation.fields);
  record["time"]["eval"] = timer.seconds();
  return state_.record_validation(validation.score, epoch, task.model(), options_.eval_every,
                                  options_.patience);
}

}  // namespace graphloom::train
