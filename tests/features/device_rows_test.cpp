// DeviceRows on the CPU device (every placement is a plain gather there) and the placement
// rules; the CUDA placements themselves are checked by tests/cuda on a machine with a GPU.
#include "graphloom/features/device_rows.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/features/tensor_feature_source.h"

namespace graphloom::features {
namespace {

const c10::Device kCpu(c10::DeviceType::CPU);

TEST(FeaturePlacement, NamesRoundTripAndUnknownNamesAreRefusedByField) {
  for (const char* name : {"auto", "cpu", "pinned", "device"}) {
    EXPECT_EQ(name_of(enum_from_name<FeaturePlacement>("feature_placement", name)), name);
  }
  try {
    enum_from_name<FeaturePlacement>("--feature-placement", "gpu");
    ADD_FAILURE() << "gpu parsed";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "--feature-placement");
  }
}

TEST(FeaturePlacement, AutoPutsAMatrixOnTheDeviceOnlyWhenHalfTheFreeMemoryHoldsIt) {
  const c10::Device cuda(c10::DeviceType::CUDA, 0);
  EXPECT_EQ(choose_feature_placement(100, 1000, kCpu), FeaturePlacement::kCpu);
  EXPECT_EQ(choose_feature_placement(500, 1000, cuda), FeaturePlacement::kDevice);
  EXPECT_EQ(choose_feature_placement(501, 1000, cuda), FeaturePlacement::kPinned);
}

TEST(DeviceRows, EveryPlacementGathersTheRowsOnTheCpu) {
  at::manual_seed(3);
  const at::Tensor ids = at::tensor({int64_t{5}, int64_t{0}, int64_t{5}, int64_t{99}});
  for (const at::Tensor& table :
       {at::randn({100, 7}), at::randn({100, 3, 2}).to(at::kHalf),
        at::randint(-100, 100, {100, 5}, at::kChar), at::randint(9, {100}, at::kLong)}) {
    for (const auto placement : {FeaturePlacement::kAuto, FeaturePlacement::kCpu,
                                 FeaturePlacement::kPinned, FeaturePlacement::kDevice}) {
      const DeviceRows rows(table, kCpu, placement);
      const at::Tensor got = rows.gather(ids);
      EXPECT_TRUE(got.device().is_cpu());
      EXPECT_TRUE(at::equal(got, table.index_select(0, ids)))
          << name_of(placement) << " " << table.sizes();
    }
  }
  const DeviceRows rows(at::randn({10, 4}), kCpu, FeaturePlacement::kAuto);
  EXPECT_EQ(rows.placement(), FeaturePlacement::kCpu);
  EXPECT_EQ(rows.gather(at::empty({0}, at::kLong)).sizes(), (std::vector<int64_t>{0, 4}));
}

TEST(DeviceRows, ACacheOfHotRowsServesThemAndCountsItsHits) {
  at::manual_seed(9);
  const at::Tensor table = at::randn({200, 6});
  for (const auto placement : {FeaturePlacement::kCpu, FeaturePlacement::kPinned}) {
    DeviceRows rows(table, kCpu, placement);
    rows.cache_rows(at::arange(150, 200, at::kLong));  // the last 50 rows are hot
    EXPECT_EQ(rows.cached_rows(), 50);
    const at::Tensor ids = at::randint(200, {1000}, at::kLong);
    EXPECT_TRUE(at::equal(rows.gather(ids), table.index_select(0, ids)));
    EXPECT_EQ(rows.cache_lookups(), 1000);
    EXPECT_EQ(rows.cache_hits(), (ids >= 150).sum().item<int64_t>());
    // All hits, then none.
    EXPECT_TRUE(at::equal(rows.gather(at::tensor({int64_t{199}, int64_t{150}})),
                          table.index_select(0, at::tensor({int64_t{199}, int64_t{150}}))));
    EXPECT_TRUE(at::equal(rows.gather(at::tensor({int64_t{3}})), table.slice(0, 3, 4)));
  }
  DeviceRows rows(table, kCpu, FeaturePlacement::kCpu);
  EXPECT_THROW(rows.cache_rows(at::tensor({int64_t{1}, int64_t{1}})), Error);
  EXPECT_THROW(rows.cache_rows(at::tensor({int64_t{200}})), RangeError);
}

// The encodings a dataset stores (int8 with a row scale, 16-bit floats, float32 with a
// normalizing scale) decoded after the gather, cache hits included: bit for bit the float32
// rows the host source decodes.
TEST(DeviceRows, EncodedTablesDecodeToTheRowsTheHostSourceDecodes) {
  at::manual_seed(5);
  const at::Tensor table = at::randn({300, 12});
  std::vector<EncodedRows> encodings = {encode_rows(table, at::kChar),
                                        encode_rows(table, at::kHalf),
                                        encode_rows(table, at::kBFloat16)};
  encodings.push_back({table.abs(), row_normalizing_scale({table.abs(), {}})});
  const at::Tensor ids = at::randint(300, {2000}, at::kLong);
  for (const EncodedRows& encoded : encodings) {
    TensorFeatureSource host;
    host.add("feat", encoded.values, encoded.row_scale);
    const at::Tensor want = host.gather("feat", ids);
    ASSERT_EQ(want.scalar_type(), at::kFloat);
    for (const auto placement :
         {FeaturePlacement::kCpu, FeaturePlacement::kPinned, FeaturePlacement::kDevice}) {
      DeviceRows rows(host.encoded_table("feat"), kCpu, placement);
      EXPECT_TRUE(at::equal(rows.gather(ids), want))
          << c10::toString(encoded.values.scalar_type()) << " " << name_of(placement);
      rows.cache_rows(at::arange(0, 300, 3, at::kLong));
      EXPECT_TRUE(at::equal(rows.gather(ids), want))
          << c10::toString(encoded.values.scalar_type()) << " cached " << name_of(placement);
    }
  }
  // A matrix given as a tensor is gathered as it is, 16-bit too.
  const at::Tensor half = table.to(at::kHalf);
  EXPECT_EQ(DeviceRows(half, kCpu, FeaturePlacement::kCpu).gather(ids).scalar_type(), at::kHalf);
}

TEST(DeviceRows, IdsOutsideTheMatrixAreRangeErrorsNamingTheId) {
  const DeviceRows rows(at::randn({10, 4}), kCpu, FeaturePlacement::kCpu);
  try {
    rows.gather(at::tensor({int64_t{3}, int64_t{10}}));
    ADD_FAILURE() << "id 10 of 10 rows gathered";
  } catch (const RangeError& e) {
    EXPECT_NE(std::string(e.what()).find("row id 10"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rows.gather(at::tensor({-1}).to(at::kLong)), RangeError);
  EXPECT_THROW(rows.gather(at::tensor({1}).to(at::kInt)), Error);
}

TEST(DeviceRows, ACudaDeviceWithoutOneIsAnOptionErrorOnTheDevice) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  try {
    const DeviceRows rows(at::randn({10, 4}), c10::Device("cuda:0"), FeaturePlacement::kPinned);
    ADD_FAILURE() << "placed on a CUDA device that is not there";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "device");
  }
}

}  // namespace
}  // namespace graphloom::features
