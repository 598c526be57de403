// Training on a CUDA device against the same run on the CPU: node classification and link
// prediction (GraphSAGE, and LightGCN's whole-graph propagation), with the graph and the
// feature rows placed on the device. ctest label `cuda`; without a CUDA build or a GPU every
// test reports SKIPPED by name. Built by the main build and by `scripts/build-cuda.sh all`
// (the GPU check), not by the test command's `cuda` stage, which compiles the CUDA code only.
#include <gtest/gtest.h>

#include "graphloom/base/device.h"
#include "graphloom/io/generators.h"
#include "graphloom/io/link_splits.h"
#include "graphloom/train/link_prediction.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::train {
namespace {

class CudaTraining : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) {
      GTEST_SKIP() << "SKIPPED: no CUDA device (a CUDA build of graphloom and a GPU are needed)";
    }
  }
};

io::Dataset planted(bool link) {
  io::Dataset data = io::generate_planted({.num_nodes = 3000,
                                           .num_classes = 4,
                                           .avg_degree = 8,
                                           .feat_dim = 16,
                                           .train_fraction = 0.3,
                                           .seed = 1});
  if (!link) return data;
  data.directed = false;
  return io::make_link_splits(data, {.valid_fraction = 0.05, .test_fraction = 0.1, .seed = 1});
}

TrainOptions options() {
  TrainOptions o;
  o.model.hidden = 32;
  o.model.dropout = 0;
  o.fanouts = {5, 5};
  o.batch_size = 256;
  o.epochs = 6;
  o.lr = 0.01;
  o.progress = false;
  return o;
}

// Every placement of the device path in turn: the batch copied, rows placed pinned with a
// cache, the graph sampled on the device (copied there, or pinned), bf16 autocast.
std::vector<TrainOptions> device_runs() {
  std::vector<TrainOptions> runs(5, options());
  for (TrainOptions& o : runs) o.device = "cuda";
  runs[1].feature_placement = features::FeaturePlacement::kPinned;
  runs[1].device_cache_bytes = 1 << 16;
  runs[2].graph_placement = GraphPlacement::kDevice;
  runs[2].feature_placement = features::FeaturePlacement::kDevice;
  runs[3].graph_placement = GraphPlacement::kPinned;
  runs[3].feature_placement = features::FeaturePlacement::kPinned;
  runs[4].precision = Precision::kBf16;
  return runs;
}

TEST_F(CudaTraining, NodeClassificationOnTheDeviceLearnsAsOnTheCpu) {
  const io::Dataset data = planted(false);
  const double cpu = train_node_classification(data, options()).test_acc;
  for (const TrainOptions& o : device_runs()) {
    EXPECT_NEAR(train_node_classification(data, o).test_acc, cpu, 0.03)
        << name_of(o.feature_placement) << " " << name_of(o.graph_placement);
  }
}

TEST_F(CudaTraining, LinkPredictionOnTheDeviceLearnsAsOnTheCpu) {
  const io::Dataset data = planted(true);
  const double cpu = train_link_prediction(data, options(), {.scorer = Scorer::kMlp}).test_auc;
  for (const TrainOptions& o : device_runs()) {
    EXPECT_NEAR(train_link_prediction(data, o, {.scorer = Scorer::kMlp}).test_auc, cpu, 0.03)
        << name_of(o.feature_placement) << " " << name_of(o.graph_placement);
  }
}

TEST_F(CudaTraining, LightGcnPropagatesOnTheDeviceAsOnTheCpu) {
  const io::Dataset data = planted(true);
  TrainOptions o = options();
  o.model.kind = nn::ModelKind::kLightGcn;
  o.fanouts = {-1, -1};
  const LinkOptions link{.loss = LinkLoss::kBpr};
  const double cpu = train_link_prediction(data, o, link).test_auc;
  o.device = "cuda";
  EXPECT_NEAR(train_link_prediction(data, o, link).test_auc, cpu, 0.03);
}

}  // namespace
}  // namespace graphloom::train
