// BufferPool: a buffer comes back once every view of it is gone, never while one is alive; the
// pool stays within its bound and grows a buffer that a bigger batch no longer fits.
#include "graphloom/loader/buffer_pool.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace graphloom::loader {
namespace {

const void* storage_of(const at::Tensor& t) { return t.storage().data(); }

TEST(BufferPool, ReusesABufferOnlyAfterItsViewsAreGone) {
  BufferPool pool(3);
  at::Tensor first = pool.take("feat", at::kFloat, {16}, 100);
  EXPECT_EQ(first.sizes(), (std::vector<int64_t>{100, 16}));
  EXPECT_TRUE(first.is_contiguous());
  const void* first_storage = storage_of(first);
  at::Tensor second = pool.take("feat", at::kFloat, {16}, 90);
  EXPECT_NE(storage_of(second), first_storage) << "handed out a buffer still in use";
  at::Tensor saved = first.view({-1});  // e.g. kept by autograd
  first = at::Tensor();
  EXPECT_NE(storage_of(pool.take("feat", at::kFloat, {16}, 100)), first_storage);
  saved = at::Tensor();
  // Now free: the same memory again, for a batch up to 1/8 bigger.
  EXPECT_EQ(storage_of(pool.take("feat", at::kFloat, {16}, 112)), first_storage);
  EXPECT_EQ(pool.num_buffers("feat"), 3u);
}

TEST(BufferPool, StaysWithinItsBoundAndReplacesBuffersThatNoLongerFit) {
  BufferPool pool(1);
  at::Tensor held = pool.take("feat", at::kFloat, {4}, 10);
  at::Tensor extra = pool.take("feat", at::kFloat, {4}, 10);  // pool full: allocated apart
  EXPECT_EQ(extra.sizes(), (std::vector<int64_t>{10, 4}));
  EXPECT_EQ(pool.num_buffers("feat"), 1u);
  held = at::Tensor();
  at::Tensor bigger = pool.take("feat", at::kFloat, {4}, 1000);
  EXPECT_EQ(bigger.sizes(), (std::vector<int64_t>{1000, 4}));
  EXPECT_EQ(pool.num_buffers("feat"), 1u);
  // Names, dtypes and row shapes never share buffers.
  const at::Tensor labels = pool.take("label", at::kLong, {}, 10);
  EXPECT_EQ(labels.scalar_type(), at::kLong);
  EXPECT_EQ(labels.sizes(), (std::vector<int64_t>{10}));
  bigger = at::Tensor();
  const at::Tensor wider = pool.take("feat", at::kFloat, {8}, 10);
  EXPECT_EQ(wider.sizes(), (std::vector<int64_t>{10, 8}));
}

}  // namespace
}  // namespace graphloom::loader
