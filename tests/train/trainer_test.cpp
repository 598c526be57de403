// The epoch engine against a task of a few lines (fitting one weight to a target): the engine,
// not the task, counts steps, stops early, restores the best parameters before the test,
// resumes from a checkpoint exactly, and logs the task's metrics.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sys/resource.h>

#include <csignal>
#include <map>
#include <set>

#include "graphloom/base/error.h"
#include "graphloom/train/metrics_log.h"
#include "graphloom/train/trainer.h"
#include "support/test_support.h"

namespace graphloom::train {
namespace {

// Fits w to 3 by squared error over batches of 10 items; validation scores come from a script.
class FitOneWeight : public Task {
 public:
  struct Weight : torch::nn::Module {
    Weight() { w = register_parameter("w", torch::zeros({1})); }
    torch::Tensor w;
  };

  explicit FitOneWeight(std::vector<double> scores = {}, int64_t fail_at_step = -1)
      : scores_(std::move(scores)),
        fail_at_step_(fail_at_step),
        items_(at::arange(50, at::kLong), {.batch_size = 10, .shuffle = true}),
        loader_({.items = &items_}, {.feature_names = {}, .label_name = ""}),
        weight_(std::make_shared<Weight>()) {}

  const TaskNames& names() const override { return names_; }
  torch::nn::Module& model() override { return *weight_; }
  loader::DataLoader& loader() override { return loader_; }
  StepOutput step(const sampling::MiniBatch& batch, const sampling::MiniBatch&) override {
    if (steps_++ == fail_at_step_) throw std::runtime_error("killed");
    StepOutput out;
    // The noise draws from torch's generator, as dropout does: a resume must restore it, and
    // the batch's items weigh in, so the batches must come back in their order.
    out.loss =
        (weight_->w - 3.0 + 0.1 * torch::randn({1}) + 0.01 * batch.seeds.to(torch::kFloat).mean())
            .pow(2)
            .sum();
    out.items = batch.seeds.numel();
    out.sums["close"] = (weight_->w - 3.0).abs().item<double>() < 1.0 ? out.items : 0;
    return out;
  }
  Validation validate() override {
    const double score = validations_ < scores_.size() ? scores_[validations_] : 0.0;
    ++validations_;
    weights_seen.push_back(weight_->w.item<double>());
    return {.score = score};
  }
  void test() override { tested_weight = weight_->w.item<double>(); }
  // State outside the model, as a DistEmbedding's rows on the servers: a sum of the weight
  // after every step. A killed run's servers keep the updates made after its last checkpoint.
  void after_step(const sampling::MiniBatch&) override { outside += weight_->w.detach(); }
  std::map<std::string, torch::Tensor> external_state() override {
    return {{"outside", outside.clone()}};
  }
  void restore_external_state(const std::map<std::string, torch::Tensor>& state) override {
    outside = state.at("outside").clone();
  }

  double weight() const { return weight_->w.item<double>(); }
  torch::Tensor outside = torch::zeros({1});
  std::vector<double> weights_seen;  // at each validation
  double tested_weight = -1;

 private:
  const TaskNames names_{.items = "items",
                         .validation_key = "val_score",
                         .validation = "score",
                         .score = "score",
                         .train_metrics = {{"close", "close"}}};
  std::vector<double> scores_;
  int64_t fail_at_step_;
  int64_t steps_ = 0;
  std::size_t validations_ = 0;
  sampling::ItemSampler items_;
  loader::DataLoader loader_;
  std::shared_ptr<Weight> weight_;
};

TrainOptions engine_options(int64_t epochs) {
  TrainOptions o;
  o.epochs = epochs;
  o.lr = 0.1;
  o.progress = false;
  return o;
}

TEST(Trainer, StopsEarlyAndTestsTheBestParameters) {
  TrainOptions options = engine_options(10);
  options.patience = 2;
  Trainer trainer(options, nullptr);
  FitOneWeight task({0.1, 0.5, 0.3, 0.2, 0.9});
  const FitResult result = trainer.fit(task);
  EXPECT_EQ(result.epochs_run, 4);  // epochs 2 and 3 did not beat epoch 1
  EXPECT_EQ(result.best_epoch, 1);
  EXPECT_DOUBLE_EQ(result.best_val, 0.5);
  EXPECT_EQ(result.steps, 4 * 5);
  EXPECT_EQ(result.parameters, 1);
  ASSERT_EQ(task.weights_seen.size(), 4U);
  EXPECT_DOUBLE_EQ(task.tested_weight, task.weights_seen[1]);  // restored before the test
  EXPECT_NE(task.weight(), task.weights_seen[3]);
  EXPECT_GT(result.items_per_second, 0);
}

TEST(Trainer, ResumedRunEqualsAStraightRunAndLogsTheTaskMetrics) {
  const testing::TempDir dir;
  TrainOptions whole = engine_options(4);
  whole.final_test = false;  // keep the last parameters, not the best
  FitOneWeight straight;
  Trainer(whole, nullptr).fit(straight);

  TrainOptions first = whole;
  first.epochs = 2;
  first.checkpoint = dir.path() / "ckpt.pt";
  first.metrics_log = dir.path() / "metrics.jsonl";
  FitOneWeight resumed;
  Trainer(first, nullptr).fit(resumed);
  TrainOptions second = first;
  second.epochs = 4;
  second.resume = true;
  FitOneWeight continued;
  const FitResult result = Trainer(second, nullptr).fit(continued);
  EXPECT_EQ(result.epochs_run, 2);
  EXPECT_DOUBLE_EQ(continued.weight(), straight.weight());  // Adam's moments came back too

  const std::vector<nlohmann::json> log = read_metrics_log(first.metrics_log);
  ASSERT_EQ(log.size(), 4U);
  for (int64_t epoch = 0; epoch < 4; ++epoch) {
    EXPECT_EQ(log[epoch]["epoch"].get<int64_t>(), epoch);
    EXPECT_GE(log[epoch]["close"].get<double>(), 0.0);  // the task's metric, a fraction
    EXPECT_LE(log[epoch]["close"].get<double>(), 1.0);
    EXPECT_TRUE(log[epoch].contains("val_score"));
    EXPECT_TRUE(log[epoch]["time"].contains("eval"));
    EXPECT_GT(log[epoch]["items_per_s"].get<double>(), 0.0);
  }
}

// A run that dies mid-epoch resumes from its last step checkpoint and ends with the parameters
// of a run that never stopped: bitwise, since every random draw and batch comes back.
TEST(Trainer, RunKilledMidEpochResumesFromItsStepCheckpointExactly) {
  const testing::TempDir dir;
  TrainOptions whole = engine_options(4);
  whole.final_test = false;
  FitOneWeight straight;
  Trainer(whole, nullptr).fit(straight);

  TrainOptions interrupted = whole;
  interrupted.checkpoint = dir.path() / "ckpt.pt";
  interrupted.checkpoint_every = 3;
  interrupted.metrics_log = dir.path() / "metrics.jsonl";
  // 5 batches per epoch: step 12 is batch 2 of epoch 3 (checkpointed), step 14 fails.
  FitOneWeight dying({}, /*fail_at_step=*/13);
  EXPECT_THROW(Trainer(interrupted, nullptr).fit(dying), std::runtime_error);

  TrainOptions resumed = interrupted;
  resumed.resume = true;
  FitOneWeight continued;
  continued.outside = dying.outside.clone();  // the updates of step 13 included
  const FitResult result = Trainer(resumed, nullptr).fit(continued);
  EXPECT_EQ(result.steps, 20 - 12);
  EXPECT_EQ(continued.weight(), straight.weight());
  // The external state came back from the checkpoint, not from the killed run's last updates.
  EXPECT_TRUE(torch::equal(continued.outside, straight.outside))
      << continued.outside.item<double>() << " against " << straight.outside.item<double>();
  const std::vector<nlohmann::json> log = read_metrics_log(interrupted.metrics_log);
  ASSERT_EQ(log.size(), 4U);  // epochs 1 and 2 before the failure, then 3 (resumed) and 4
  EXPECT_EQ(log[2]["epoch"].get<int64_t>(), 2);
  EXPECT_EQ(log[2]["resumed_at_batch"].get<int64_t>(), 2);
  EXPECT_FALSE(log[3].contains("resumed_at_batch"));

  // Without the step checkpoints the same failure loses the epoch: the resume starts at 3.
  TrainOptions epochs_only = whole;
  epochs_only.checkpoint = dir.path() / "epochs.pt";
  FitOneWeight dying_again({}, 13);
  EXPECT_THROW(Trainer(epochs_only, nullptr).fit(dying_again), std::runtime_error);
  epochs_only.resume = true;
  FitOneWeight from_epoch;
  EXPECT_EQ(Trainer(epochs_only, nullptr).fit(from_epoch).steps, 20 - 10);
  EXPECT_EQ(from_epoch.weight(), straight.weight());
}

// The files of a directory, by name.
std::set<std::string> files_in(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

// Makes every later write past `bytes` of a file fail with EFBIG, as a full disk fails with
// ENOSPC, until destroyed (SIGXFSZ ignored, so the write returns the error instead).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limited{bytes, saved_.rlim_max};
    ::setrlimit(RLIMIT_FSIZE, &limited);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_);
  }

 private:
  rlimit saved_{};
  void (*previous_)(int) = nullptr;
};

// A checkpoint that cannot be written leaves the last good one and no temporary; training goes
// on with a warning by default, or stops with the writer's error when asked to.
TEST(Trainer, ACheckpointThatCannotBeWrittenKeepsThePreviousOneAndTrainingGoesOn) {
  const testing::TempDir dir;
  TrainOptions first = engine_options(2);
  first.checkpoint = dir.path() / "ckpt.pt";
  FitOneWeight task;
  Trainer(first, nullptr).fit(task);
  const auto good = std::filesystem::file_size(first.checkpoint);

  TrainOptions later = first;
  later.epochs = 4;
  later.resume = true;
  {
    const FileSizeLimit full(64);
    FitOneWeight resumed;
    const FitResult result = Trainer(later, nullptr).fit(resumed);  // no abort, no exception
    EXPECT_EQ(result.epochs_run, 2);
    later.on_checkpoint_failure = CheckpointFailure::kStop;
    FitOneWeight stopping;
    const std::string error = testing::error_of([&] { Trainer(later, nullptr).fit(stopping); });
    EXPECT_NE(error.find("cannot write checkpoint '" + first.checkpoint.string() +
                         "': File too "
                         "large"),
              std::string::npos)
        << error;
  }
  EXPECT_EQ(files_in(dir.path()), std::set<std::string>{"ckpt.pt"});  // no temporary left
  EXPECT_EQ(std::filesystem::file_size(first.checkpoint), good);
  TrainOptions check = later;  // the kept checkpoint still resumes: from epoch 2
  check.on_checkpoint_failure = CheckpointFailure::kWarn;
  FitOneWeight again;
  EXPECT_EQ(Trainer(check, nullptr).fit(again).epochs_run, 2);
}

// Errors name the field (the CLI and Python say it in their own terms).
TEST(TrainOptions, ValidateNamesTheField) {
  const auto field_of = [](const TrainOptions& options) {
    try {
      options.validate();
    } catch (const OptionError& e) {
      return e.field() + ": " + e.detail();
    }
    return std::string("valid");
  };
  // Each case edits a fresh default.
  const auto edited = [&](auto edit) {
    TrainOptions options;
    edit(options);
    return field_of(options);
  };
  EXPECT_EQ(edited([](TrainOptions&) {}), "valid");
  EXPECT_EQ(edited([](TrainOptions& o) { o.batch_size = 0; }), "batch_size: must be >= 1, got 0");
  EXPECT_EQ(edited([](TrainOptions& o) {
              o.fanouts = {10, -2};
            }),
            "fanouts: must be positive or -1 (all neighbors), got 10,-2");
  EXPECT_EQ(edited([](TrainOptions& o) { o.num_workers = 3; }),
            "prefetch: (1) must be at least `num_workers` (3)");
  EXPECT_EQ(edited([](TrainOptions& o) { o.lr = -0.1; }), "lr: must be >= 0, got -0.1");
  EXPECT_EQ(enum_from_name<EvalMode>("eval", "sampled"), EvalMode::kSampled);
  EXPECT_EQ(testing::error_of([] { enum_from_name<EvalMode>("eval", "exact"); }),
            "eval must be one of full, sampled, got 'exact'");
  EXPECT_EQ(name_of(SelfLoops::kKeep), "keep");
}

TEST(Trainer, RefusesZeroEpochs) {
  const std::string message = testing::error_of([] { Trainer(engine_options(0), nullptr); });
  EXPECT_NE(message.find("epochs must be >= 1, got 0"), std::string::npos) << message;
}

}  // namespace
}  // namespace graphloom::train
