// The epoch engine against a task of a few lines (fitting one weight to a target): the engine,
// not the task, counts steps, stops early, restores the best parameters before the test,
// resumes from a checkpoint exactly, and logs the task's metrics.
#include <gtest/gtest.h>
#include <torch/torch.h>

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

  explicit FitOneWeight(std::vector<double> scores = {})
      : scores_(std::move(scores)),
        items_(at::arange(50, at::kLong), {.batch_size = 10, .shuffle = true}),
        loader_({.items = &items_}, {.feature_names = {}, .label_name = ""}),
        weight_(std::make_shared<Weight>()) {}

  const TaskNames& names() const override { return names_; }
  torch::nn::Module& model() override { return *weight_; }
  loader::DataLoader& loader() override { return loader_; }
  StepOutput step(const sampling::MiniBatch& batch) override {
    StepOutput out;
    out.loss = (weight_->w - 3.0).pow(2).sum();
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

  double weight() const { return weight_->w.item<double>(); }
  std::vector<double> weights_seen;  // at each validation
  double tested_weight = -1;

 private:
  const TaskNames names_{.items = "items",
                         .validation_key = "val_score",
                         .validation = "score",
                         .score = "score",
                         .train_metrics = {{"close", "close"}}};
  std::vector<double> scores_;
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
            "prefetch: (1) must be at least num_workers (3)");
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
