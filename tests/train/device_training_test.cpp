// Training on a device, tested where there is none: the path a GPU takes (ATen's generic ops,
// batches moved by to_device, fp16 with loss scaling) run on the CPU against the native one,
// and the refusals of devices this build or machine cannot use.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/features/dataset_encoding.h"
#include "graphloom/io/generators.h"
#include "graphloom/io/link_splits.h"
#include "graphloom/nn/sparse_ops.h"
#include "graphloom/sampling/block.h"
#include "graphloom/sampling/labor.h"
#include "graphloom/train/link_prediction.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::train {
namespace {

io::Dataset planted() {
  return io::generate_planted({.num_nodes = 3000,
                               .num_classes = 4,
                               .avg_degree = 8,
                               .feat_dim = 16,
                               .train_fraction = 0.3,
                               .seed = 1});
}

TrainOptions options_for(nn::ModelKind kind) {
  TrainOptions o;
  o.model.kind = kind;
  o.model.hidden = 32;
  o.model.heads = 2;
  // Dropout masks come from different generators on the two paths; without dropout the runs
  // differ only in rounding.
  o.model.dropout = 0;
  o.model.attention_dropout = 0;
  o.fanouts = {5, 5};
  o.batch_size = 256;
  o.epochs = 6;
  o.lr = 0.01;
  o.progress = false;
  return o;
}

// The generic ops and the native kernels differ only in rounding: the two runs of every model
// reach the same test accuracy to within a few nodes.
TEST(DeviceTraining, TheGenericPathTrainsAsTheNativeKernelsDo) {
  const io::Dataset data = planted();
  for (const nn::ModelKind kind :
       {nn::ModelKind::kSage, nn::ModelKind::kGcn, nn::ModelKind::kGat}) {
    const TrainOptions o = options_for(kind);
    const double native = train_node_classification(data, o).test_acc;
    double generic = 0;
    {
      const nn::GenericOpsScope scope;
      generic = train_node_classification(data, o).test_acc;
    }
    EXPECT_GT(native, 0.6) << name_of(kind);
    EXPECT_NEAR(generic, native, 0.02) << name_of(kind) << " native " << native;
  }
}

TEST(DeviceTraining, Fp16WithLossScalingTrainsAsFp32Does) {
  const io::Dataset data = planted();
  TrainOptions o = options_for(nn::ModelKind::kSage);
  const TrainResult fp32 = train_node_classification(data, o);
  o.precision = Precision::kFp16;
  const TrainResult fp16 = train_node_classification(data, o);
  EXPECT_NEAR(fp16.test_acc, fp32.test_acc, 0.03);
}

// The tensor-op sampler returns the C++ sampler's blocks bit for bit, so a run that samples
// with it (here on the CPU), the graph copied or pinned, by neighbor sampling or LABOR, is the
// same run.
TEST(DeviceTraining, SamplingWithTheGraphOnTheDeviceIsTheSameRun) {
  const io::Dataset data = planted();
  TrainOptions o = options_for(nn::ModelKind::kSage);
  o.model.dropout = 0.5;  // the same masks too: nothing else differs between the runs
  for (const sampling::SamplingMethod method :
       {sampling::SamplingMethod::kNeighbor, sampling::SamplingMethod::kLabor}) {
    o.sampler = method;
    o.graph_placement = GraphPlacement::kCpu;
    const TrainResult host = train_node_classification(data, o);
    for (const GraphPlacement placement : {GraphPlacement::kDevice, GraphPlacement::kPinned}) {
      o.graph_placement = placement;
      const TrainResult device = train_node_classification(data, o);
      const std::string what = fmt::format("{} {}", name_of(method), name_of(placement));
      EXPECT_EQ(device.test_acc, host.test_acc) << what;
      EXPECT_EQ(device.best_val_acc, host.best_val_acc) << what;
      EXPECT_EQ(device.test_f1, host.test_f1) << what;
    }
  }
}

// Link prediction takes the device path too: the batch moved to the training device, the
// scores under autocast, evaluation scored there in chunks and brought back.
io::Dataset link_planted() {
  io::Dataset data = io::generate_planted(
      {.num_nodes = 2000, .num_classes = 5, .avg_degree = 10, .feat_dim = 16, .seed = 4});
  data.directed = false;
  return io::make_link_splits(data, {.valid_fraction = 0.05, .test_fraction = 0.1, .seed = 1});
}

TrainOptions link_options() {
  TrainOptions o = options_for(nn::ModelKind::kSage);
  o.epochs = 5;
  return o;
}

TEST(DeviceTraining, LinkPredictionOnTheGenericPathTrainsAsOnTheNativeKernels) {
  const io::Dataset data = link_planted();
  for (const nn::ModelKind kind : {nn::ModelKind::kSage, nn::ModelKind::kGat}) {
    TrainOptions o = link_options();
    o.model.kind = kind;
    const double native = train_link_prediction(data, o, {}).test_auc;
    double generic = 0;
    {
      const nn::GenericOpsScope scope;
      generic = train_link_prediction(data, o, {}).test_auc;
    }
    EXPECT_GT(native, 0.75) << name_of(kind);
    EXPECT_NEAR(generic, native, 0.02) << name_of(kind);
  }
}

TEST(DeviceTraining, LinkPredictionInHalfPrecisionTrainsAsInFp32) {
  const io::Dataset data = link_planted();
  TrainOptions o = link_options();
  // The MLP scorer's linear layers are autocast too.
  const double fp32 = train_link_prediction(data, o, {.scorer = Scorer::kMlp}).test_auc;
  for (const Precision precision : {Precision::kFp16, Precision::kBf16}) {
    o.precision = precision;
    const LinkResult half = train_link_prediction(data, o, {.scorer = Scorer::kMlp});
    EXPECT_NEAR(half.test_auc, fp32, 0.03) << name_of(precision);
  }
}

// The graph sampled by the tensor-op sampler and the rows read through a placement with a
// cache of hot rows give the run the loader's C++ sampler and gather give, and the cache
// reports its hits.
TEST(DeviceTraining, LinkPredictionWithPlacedGraphAndRowsIsTheSameRun) {
  const io::Dataset data = link_planted();
  TrainOptions o = link_options();
  o.model.dropout = 0.5;  // the same masks too
  const LinkResult host = train_link_prediction(data, o, {});
  o.graph_placement = GraphPlacement::kPinned;
  o.feature_placement = features::FeaturePlacement::kDevice;
  o.device_cache_bytes = 500 * 16 * 4;  // the 500 busiest nodes' rows
  const LinkResult placed = train_link_prediction(data, o, {});
  EXPECT_EQ(placed.test_auc, host.test_auc);
  EXPECT_EQ(placed.best_val_auc, host.best_val_auc);
  EXPECT_EQ(placed.counters.at("device_cache_rows"), 500);
  EXPECT_GT(placed.counters.at("device_cache_hit_rate"), 0.2);  // a quarter of the rows
  EXPECT_FALSE(host.counters.contains("device_cache_rows"));
}

// Features stored as int8 with row scales or as bfloat16 go to the device as stored and are
// decoded there: the same run as the loader's decoding gather.
TEST(DeviceTraining, EncodedFeaturesDecodedOnTheDeviceAreTheSameRun) {
  for (const char* dtype : {"int8", "bfloat16"}) {
    io::Dataset data = planted();
    features::encode_dataset_features(data, dtype);
    TrainOptions o = options_for(nn::ModelKind::kSage);
    o.model.dropout = 0.5;
    const TrainResult host = train_node_classification(data, o);
    o.feature_placement = features::FeaturePlacement::kDevice;
    o.device_cache_bytes = 300 * 16;  // int8 rows: 16 bytes
    const TrainResult device = train_node_classification(data, o);
    EXPECT_EQ(device.test_acc, host.test_acc) << dtype;
    EXPECT_EQ(device.best_val_acc, host.best_val_acc) << dtype;
    EXPECT_GT(device.counters.at("device_cache_hit_rate"), 0.0) << dtype;
  }
}

TEST(DeviceTraining, MovingABatchToTheCpuKeepsEveryTensor) {
  sampling::MiniBatch batch;
  batch.seeds = torch::arange(4, torch::kLong);
  batch.labels = torch::tensor({1, 0, 1, 1}, torch::kLong);
  batch.features["feat"] = torch::randn({6, 3});
  batch.blocks.resize(1);
  batch.blocks[0].src_ids = torch::arange(6, torch::kLong);
  batch.blocks[0].num_dst = 4;
  batch.blocks[0].indptr = torch::tensor({0, 1, 2, 3, 4}, torch::kLong);
  batch.blocks[0].indices = torch::tensor({4, 5, 4, 5}, torch::kLong);
  const sampling::MiniBatch moved = sampling::to_device(batch, c10::Device(c10::DeviceType::CPU));
  EXPECT_TRUE(torch::equal(moved.blocks[0].indices, batch.blocks[0].indices));
  EXPECT_TRUE(torch::equal(moved.features.at("feat"), batch.features.at("feat")));
  EXPECT_EQ(moved.blocks[0].num_dst, 4);
  EXPECT_FALSE(moved.blocks[0].edge_ids.defined());  // undefined stays undefined
}

TEST(DeviceTraining, ADeviceThisBuildOrMachineCannotUseIsAnOptionErrorOnDevice) {
  TrainOptions o = options_for(nn::ModelKind::kSage);
  for (const char* device : {"tpu", "cuda:x", "cuda"}) {
    if (std::string(device) == "cuda" && cuda_device_count() > 0) continue;
    o.device = device;
    try {
      o.validate();
      ADD_FAILURE() << device << " accepted";
    } catch (const OptionError& e) {
      EXPECT_EQ(e.field(), "device") << device;
    }
  }
}

}  // namespace
}  // namespace graphloom::train
