// Encoded rows: decoding matches the reference conversion, int8 error stays within half a step,
// lazy row normalization equals dividing by the row sums.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/base/error.h"
#include "graphloom/features/row_codec.h"
#include "graphloom/features/tensor_feature_source.h"

namespace graphloom::features {
namespace {

TEST(RowCodec, SixteenBitFloatsDecodeAsTheReferenceConversion) {
  const at::Tensor table = at::randn({300, 37});  // a dim that is not a multiple of 8
  const at::Tensor ids = at::randint(300, {500}, at::kLong);
  for (auto dtype : {at::kHalf, at::kBFloat16}) {
    const EncodedRows encoded = encode_rows(table, dtype);
    EXPECT_EQ(encoded.values.scalar_type(), dtype);
    EXPECT_FALSE(encoded.row_scale.defined());
    at::Tensor out = at::empty({500, 37});
    gather_decoded_rows(encoded, ids, out);
    EXPECT_TRUE(at::equal(out, encoded.values.index_select(0, ids).to(at::kFloat))) << dtype;
  }
}

TEST(RowCodec, Int8KeepsEachValueWithinHalfAStepOfItsRow) {
  at::Tensor table = at::randn({200, 64}) * at::rand({200, 1}) * 10;
  table[7].zero_();  // an all-zero row must not divide by zero
  const EncodedRows encoded = encode_rows(table, at::kChar);
  ASSERT_TRUE(encoded.row_scale.defined());
  const at::Tensor ids = at::arange(200, at::kLong);
  at::Tensor out = at::empty({200, 64});
  gather_decoded_rows(encoded, ids, out);
  const at::Tensor error = (out - table).abs().amax(1);
  EXPECT_TRUE((error <= encoded.row_scale * 0.5f + 1e-6f).all().item<bool>());
  EXPECT_TRUE(at::equal(out[7], at::zeros({64})));
  EXPECT_EQ(encoded.values.abs().max().item<int64_t>(), 127);
}

TEST(RowCodec, RowNormalizingScaleEqualsDividingByRowSums) {
  const at::Tensor table = at::rand({50, 10});
  const EncodedRows plain{table, {}};
  const at::Tensor scale = row_normalizing_scale(plain);
  TensorFeatureSource source;
  source.add("feat", table, scale);
  const at::Tensor ids = at::arange(50, at::kLong);
  const at::Tensor expected = table / table.sum(1, true);
  EXPECT_TRUE(at::allclose(source.gather("feat", ids), expected, 1e-5, 1e-6));
  // Folded into an int8 scale too.
  const EncodedRows quantized = encode_rows(table, at::kChar);
  TensorFeatureSource compressed;
  compressed.add("feat", quantized.values, row_normalizing_scale(quantized));
  EXPECT_EQ(compressed.info("feat").dtype, at::kFloat);
  EXPECT_TRUE(at::allclose(compressed.gather("feat", ids), expected, 0, 0.01));
}

TEST(RowCodec, BadInputsAreRefused) {
  EXPECT_THROW(encode_rows(at::zeros({3, 2}, at::kLong), at::kHalf), Error);
  EXPECT_THROW(encode_rows(at::zeros({3, 2}), at::kDouble), Error);
  TensorFeatureSource source;
  EXPECT_THROW(source.add("feat", at::zeros({3, 2}, at::kLong), at::ones({3})), Error);
  EXPECT_THROW(source.add("feat", at::zeros({3, 2}, at::kChar), at::ones({2})), Error);
}

}  // namespace
}  // namespace graphloom::features
