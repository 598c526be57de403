// Row gather: every dtype, row shapes, and errors naming the feature.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/base/error.h"
#include "graphloom/features/tensor_feature_source.h"

namespace graphloom::features {
namespace {

TEST(TensorFeatureSource, GathersRowsOfAnyDtype) {
  const at::Tensor ids = at::tensor({4, 0, 4, 2}, at::kLong);
  for (auto dtype : {at::kFloat, at::kDouble, at::kByte, at::kLong, at::kBool}) {
    const at::Tensor table = (at::arange(5 * 3) % 7).to(dtype).view({5, 3});
    const TensorFeatureSource source({{"x", table}});
    EXPECT_TRUE(at::equal(source.gather("x", ids), table.index_select(0, ids))) << dtype;
  }
  // 16-bit floats are decoded to float32.
  const at::Tensor half = at::randn({5, 3}).to(at::kHalf);
  const TensorFeatureSource decoded({{"x", half}});
  EXPECT_EQ(decoded.info("x").dtype, at::kFloat);
  EXPECT_TRUE(at::equal(decoded.gather("x", ids), half.index_select(0, ids).to(at::kFloat)));
  // 32-byte rows take the streaming path; 1-D tables (labels) gather scalars.
  const at::Tensor wide = at::randn({100, 64});
  const at::Tensor labels = at::arange(100, at::kLong);
  const TensorFeatureSource source({{"feat", wide}, {"label", labels}});
  const at::Tensor many = at::randint(100, {1000}, at::kLong);
  EXPECT_TRUE(at::equal(source.gather("feat", many), wide.index_select(0, many)));
  EXPECT_TRUE(at::equal(source.gather("label", many), many));
  EXPECT_EQ(source.info("feat").row_shape, std::vector<int64_t>({64}));
  EXPECT_EQ(source.gather("feat", at::empty({0}, at::kLong)).sizes(), at::IntArrayRef({0, 64}));
}

TEST(TensorFeatureSource, GatherRowsPlacesEachRowAtItsPosition) {
  // Streaming (64 floats: whole 32-byte vectors) and plain (3 bytes) rows alike.
  for (const at::Tensor& table : {at::randn({100, 64}), at::randint(256, {100, 3}, at::kByte)}) {
    const at::Tensor ids = at::randint(100, {500}, at::kLong);
    const at::Tensor positions = at::randperm(500, at::kLong);
    at::Tensor out = at::zeros({500, table.size(1)}, table.options());
    gather_rows(table, ids, out, positions);
    EXPECT_TRUE(at::equal(out.index_select(0, positions), table.index_select(0, ids)));
  }
  at::Tensor out = at::empty({2, 3});
  EXPECT_THROW(gather_rows(at::randn({4, 3}), at::tensor({1, 2}, at::kLong), out,
                           at::tensor({0}, at::kLong)),
               Error);
}

TEST(TensorFeatureSource, WholeTableOnlyWhenRowsAreGatheredAsStored) {
  const at::Tensor table = at::randn({5, 3});
  TensorFeatureSource source({{"feat", table}, {"half", at::randn({5, 3}).to(at::kHalf)}});
  source.add("scaled", at::randn({5, 3}), at::ones({5}));
  EXPECT_EQ(source.whole_table("feat").data_ptr(), table.data_ptr());  // no copy
  EXPECT_FALSE(source.whole_table("half").defined());                  // decoded on gather
  EXPECT_FALSE(source.whole_table("scaled").defined());                // scaled on gather
  EXPECT_THROW(source.whole_table("labels"), Error);
}

TEST(TensorFeatureSource, ErrorsNameTheFeature) {
  const TensorFeatureSource source({{"feat", at::zeros({5, 2})}});
  try {
    source.gather("feat", at::tensor({1, 5}, at::kLong));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "gather 'feat': row id 5 is outside [0, 5)");
  }
  try {
    source.gather("labels", at::tensor({1}, at::kLong));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "no feature named 'labels' (available: feat)");
  }
  at::Tensor wrong = at::zeros({2, 3});
  EXPECT_THROW(source.gather("feat", at::tensor({1, 2}, at::kLong), wrong), Error);
}

}  // namespace
}  // namespace graphloom::features
