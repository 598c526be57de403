// Training end to end on small generated graphs: layer-wise inference matches the model on
// full-neighbor blocks, resume continues exactly, early stopping stops, bad datasets fail
// clearly, and a GNN beats the feature-only baseline on the planted graph.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/io/generators.h"
#include "graphloom/nn/models.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/train/checkpoint.h"
#include "graphloom/train/inference.h"
#include "graphloom/train/metrics_log.h"
#include "graphloom/train/node_classification.h"
#include "support/test_support.h"

namespace graphloom::train {
namespace {

io::Dataset small_planted(int64_t nodes = 3000) {
  return io::generate_planted({.num_nodes = nodes,
                               .num_classes = 4,
                               .avg_degree = 8,
                               .feat_dim = 16,
                               .train_fraction = 0.3,
                               .seed = 1});
}

TrainOptions quick_options() {
  TrainOptions o;
  o.model.hidden = 32;
  o.fanouts = {5, 5};
  o.batch_size = 256;
  o.epochs = 4;
  o.lr = 0.01;
  o.progress = false;
  return o;
}

TEST(Inference, LayerwiseMatchesTheModelOnFullBlocks) {
  const io::Dataset data = small_planted(500);
  const sampling::LocalNeighborSource source(data.graph);
  for (const nn::ModelKind kind :
       {nn::ModelKind::kSage, nn::ModelKind::kGcn, nn::ModelKind::kGat}) {
    torch::manual_seed(0);
    auto model =
        nn::make_model({.kind = kind, .in = 16, .hidden = 8, .out = 4, .layers = 2, .heads = 2});
    model->set_graph_degrees(data.graph.in_degrees(), data.graph.out_degrees());
    const at::Tensor features = data.node_features.at("feat");
    const at::Tensor all = layerwise_inference(*model, source, features, /*batch_size=*/64);
    const sampling::NeighborSampler full(&source, {.fanouts = {-1, -1}});
    const at::Tensor seeds = torch::tensor({0, 17, 499, 250}, torch::kLong);
    const sampling::MiniBatch batch = full.sample(seeds, 0, 0);
    model->eval();
    torch::NoGradGuard no_grad;
    const torch::Tensor direct =
        model->forward(batch.blocks, features.index_select(0, batch.input_nodes()));
    EXPECT_TRUE(torch::allclose(all.index_select(0, seeds), direct, 1e-4, 1e-5)) << name_of(kind);
  }
}

TEST(Inference, ChunksThatRunOutOfDeviceMemoryAreHalvedUntilTheyFit) {
  const io::Dataset data = small_planted(500);
  const sampling::LocalNeighborSource source(data.graph);
  torch::manual_seed(0);
  auto model = nn::make_model({.in = 16, .hidden = 8, .out = 4, .layers = 2});
  const at::Tensor features = data.node_features.at("feat");
  const at::Tensor expected = layerwise_inference(*model, source, features, /*batch_size=*/64);
  // A device with room for 100 input rows: bigger chunks run out of memory, as cudaMalloc does.
  std::vector<int64_t> read, refused;
  const RowReader tight = [&](const at::Tensor& ids) {
    if (ids.numel() > 100) {
      refused.push_back(ids.numel());
      TORCH_CHECK_WITH(OutOfMemoryError, false, "CUDA out of memory (simulated)");
    }
    read.push_back(ids.numel());
    return features.index_select(0, ids);
  };
  const at::Tensor all = layerwise_inference(*model, source, tight, /*batch_size=*/64);
  EXPECT_TRUE(torch::allclose(all, expected, 1e-5, 1e-6));
  ASSERT_FALSE(refused.empty());
  EXPECT_LE(*std::max_element(read.begin(), read.end()), 100);
  // Halved for good (a smaller chunk is kept for what follows), not retried at 64 per chunk.
  EXPECT_LE(refused.size(), 8u);
  // Not even one destination fits: an error that says what to lower.
  const RowReader none = [&](const at::Tensor&) -> at::Tensor {
    TORCH_CHECK_WITH(OutOfMemoryError, false, "CUDA out of memory (simulated)");
  };
  const std::string error =
      testing::error_of([&] { layerwise_inference(*model, source, none, /*batch_size=*/64); });
  EXPECT_NE(error.find("even one destination at a time"), std::string::npos) << error;
  EXPECT_NE(error.find("lower --hidden"), std::string::npos) << error;
}

TEST(Training, ResumeContinuesExactlyWhereItStopped) {
  const io::Dataset data = small_planted();
  testing::TempDir dir;
  TrainOptions straight = quick_options();
  straight.checkpoint = dir / "straight.pt";
  const TrainResult full = train_node_classification(data, straight);

  TrainOptions first_half = quick_options();
  first_half.epochs = 2;
  first_half.checkpoint = dir / "resumed.pt";
  first_half.metrics_log = dir / "log.jsonl";
  train_node_classification(data, first_half);
  TrainOptions second_half = quick_options();
  second_half.checkpoint = dir / "resumed.pt";
  second_half.metrics_log = dir / "log.jsonl";
  second_half.resume = true;
  const TrainResult resumed = train_node_classification(data, second_half);

  EXPECT_EQ(resumed.epochs_run, 2);
  EXPECT_DOUBLE_EQ(resumed.test_acc, full.test_acc);
  EXPECT_DOUBLE_EQ(resumed.best_val_acc, full.best_val_acc);
  EXPECT_EQ(read_metrics_log(dir / "log.jsonl").size(), 4u);  // one line per epoch, appended
  // The parameters of both checkpoints are identical.
  auto model_a = nn::make_model({.in = 16, .hidden = 32, .out = 4, .layers = 2});
  auto model_b = nn::make_model({.in = 16, .hidden = 32, .out = 4, .layers = 2});
  torch::optim::Adam opt_a(model_a->parameters()), opt_b(model_b->parameters());
  TrainState state_a, state_b;
  load_checkpoint(dir / "straight.pt", *model_a, opt_a, state_a);
  load_checkpoint(dir / "resumed.pt", *model_b, opt_b, state_b);
  EXPECT_EQ(state_a.epoch, 3);
  EXPECT_EQ(state_b.epoch, 3);
  const auto a = model_a->parameters();
  const auto b = model_b->parameters();
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
}

// fp16's loss scale is part of the checkpoint: with a growth interval of one step it changes
// all the time, and a resumed run ends on the uninterrupted run's scale.
TEST(Training, ResumedFp16RunContinuesTheLossScale) {
  const io::Dataset data = small_planted();
  testing::TempDir dir;
  TrainOptions o = quick_options();
  o.precision = Precision::kFp16;
  o.loss_scaling = {.init_scale = 8, .growth_interval = 1};
  const TrainResult full = train_node_classification(data, o);
  EXPECT_NE(full.loss_scale, 8.0);
  TrainOptions first_half = o;
  first_half.epochs = 2;
  first_half.checkpoint = dir / "fp16.pt";
  train_node_classification(data, first_half);
  TrainOptions second_half = o;
  second_half.checkpoint = dir / "fp16.pt";
  second_half.resume = true;
  const TrainResult resumed = train_node_classification(data, second_half);
  EXPECT_EQ(resumed.loss_scale, full.loss_scale) << full.steps << " steps";
  EXPECT_DOUBLE_EQ(resumed.test_acc, full.test_acc);
}

TEST(Training, EarlyStoppingStopsWithoutImprovement) {
  TrainOptions o = quick_options();
  o.epochs = 10;
  o.lr = 0;  // nothing changes, so validation accuracy never improves after the first epoch
  o.patience = 2;
  const TrainResult result = train_node_classification(small_planted(), o);
  EXPECT_EQ(result.epochs_run, 3);
  EXPECT_EQ(result.best_epoch, 0);
}

TEST(Training, GnnBeatsTheFeatureOnlyBaseline) {
  const io::Dataset data = io::generate_planted({.num_nodes = 6000, .num_classes = 5, .seed = 2});
  TrainOptions o = quick_options();
  o.epochs = 6;
  const double gnn = train_node_classification(data, o).test_acc;
  o.model.kind = nn::ModelKind::kMlp;
  const double mlp = train_node_classification(data, o).test_acc;
  EXPECT_GT(gnn, mlp + 0.2) << "sage " << gnn << " mlp " << mlp;
}

TEST(Training, DatasetsWithoutLabelsOrSplitsFailClearly) {
  io::Dataset data = small_planted(200);
  data.splits.erase("valid");
  try {
    train_node_classification(data, quick_options());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no 'valid' split"), std::string::npos);
  }
  data.labels = at::Tensor();
  EXPECT_THROW(train_node_classification(data, quick_options()), Error);
}

TEST(MetricsLog, PlotDrawsCurves) {
  testing::TempDir dir;
  {
    MetricsLog log(dir / "m.jsonl", false);
    for (int e = 0; e < 3; ++e)
      log.write(
          {{"epoch", e}, {"loss", 1.0 / (e + 1)}, {"train_acc", 0.5}, {"val_acc", 0.4 + 0.1 * e}});
  }
  plot_metrics(dir / "m.jsonl", dir / "c.svg");
  std::ifstream in(dir / "c.svg");
  const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), 'p') > 0, true);
  EXPECT_NE(svg.find("polyline"), std::string::npos);
  EXPECT_NE(svg.find("validation"), std::string::npos);
  EXPECT_THROW(plot_metrics(dir / "missing.jsonl", dir / "d.svg"), Error);
}

}  // namespace
}  // namespace graphloom::train
