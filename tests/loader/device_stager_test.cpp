// DeviceStager on the CPU, where a batch is used as it is, and map_tensors, the one list of a
// batch's tensors that staging pins, copies and guards: every tensor reached, none invented.
// The side stream itself is checked by the `cuda` tests.
#include "graphloom/loader/device_stager.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/loader/data_loader.h"

namespace graphloom::loader {
namespace {

sampling::MiniBatch full_batch() {
  sampling::MiniBatch batch;
  batch.seeds = at::arange(4, at::kLong);
  batch.labels = at::tensor({1, 0, 1, 1}, at::kLong);
  batch.features["feat"] = at::randn({6, 3});
  batch.pairs.src = at::arange(2, at::kLong);
  batch.pairs.dst = at::arange(2, at::kLong);
  batch.pairs.negative_dst = at::arange(2, at::kLong);
  batch.pairs.position = at::arange(6, at::kLong);
  batch.blocks.resize(1);
  batch.blocks[0].src_ids = at::arange(6, at::kLong);
  batch.blocks[0].num_dst = 4;
  batch.blocks[0].indptr = at::tensor({0, 1, 2, 3, 4}, at::kLong);
  batch.blocks[0].indices = at::tensor({4, 5, 4, 5}, at::kLong);
  batch.blocks[0].edge_ids = at::arange(4, at::kLong);
  return batch;
}

TEST(DeviceStager, OnTheCpuABatchIsUsedAsItIs) {
  const DeviceStager stager(c10::Device(c10::DeviceType::CPU));
  EXPECT_FALSE(stager.stage(std::nullopt).has_value());  // the end of an epoch passes through
  const sampling::MiniBatch batch = full_batch();
  std::optional<StagedBatch> staged = stager.stage(batch);
  ASSERT_TRUE(staged.has_value());
  EXPECT_EQ(staged->copied, nullptr);
  const sampling::MiniBatch& ready = stager.ready(*staged);
  EXPECT_TRUE(ready.features.at("feat").is_same(batch.features.at("feat")));
  EXPECT_TRUE(ready.blocks[0].indices.is_same(batch.blocks[0].indices));
  EXPECT_TRUE(staged->host.seeds.is_same(batch.seeds));
}

TEST(DeviceStager, MapTensorsReachesEveryDefinedTensorAndLeavesTheRestUndefined) {
  const sampling::MiniBatch batch = full_batch();
  int64_t calls = 0;
  const sampling::MiniBatch mapped = sampling::map_tensors(batch, [&](const at::Tensor& t) {
    ++calls;
    return t + 1;
  });
  EXPECT_EQ(calls, 11);  // seeds, labels, feat, 4 of pairs, 4 of the block
  EXPECT_TRUE(at::equal(mapped.blocks[0].indices, batch.blocks[0].indices + 1));
  EXPECT_TRUE(at::equal(mapped.pairs.position, batch.pairs.position + 1));
  EXPECT_TRUE(at::equal(mapped.features.at("feat"), batch.features.at("feat") + 1));
  EXPECT_FALSE(mapped.blocks[0].edge_types.defined());
  EXPECT_FALSE(mapped.pyg.edge_index.defined());
  EXPECT_EQ(mapped.blocks[0].num_dst, 4);
}

TEST(DeviceStager, PinnedLoaderBuffersWithoutACudaDeviceAreAnOptionError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  try {
    check_pipeline_options({.pin_memory = true});
    ADD_FAILURE() << "pin_memory accepted without a CUDA device";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "pin_memory");
  }
}

}  // namespace
}  // namespace graphloom::loader
