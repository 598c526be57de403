// ItemSampler: GraphBolt DistributedItemSampler's documented example (15 items, 4 replicas,
// batch 2) for every combination of drop_last and drop_uneven_inputs, and seeded shuffling.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/base/error.h"
#include "graphloom/sampling/item_sampler.h"

namespace graphloom::sampling {
namespace {

using Batches = std::vector<std::vector<int64_t>>;

Batches batches_of(int64_t rank, bool drop_last, bool drop_uneven, bool shuffle = false,
                   uint64_t epoch = 0) {
  const ItemSampler sampler(at::arange(15, at::kLong), {.batch_size = 2,
                                                        .shuffle = shuffle,
                                                        .drop_last = drop_last,
                                                        .rank = rank,
                                                        .world_size = 4,
                                                        .drop_uneven_inputs = drop_uneven,
                                                        .seed = 5});
  Batches out;
  for (const at::Tensor& b : sampler.batches(epoch)) {
    out.emplace_back(b.data_ptr<int64_t>(), b.data_ptr<int64_t>() + b.numel());
  }
  return out;
}

TEST(ItemSampler, DocumentedExampleNoDrops) {
  EXPECT_EQ(batches_of(0, false, false), Batches({{0, 1}, {2, 3}}));
  EXPECT_EQ(batches_of(1, false, false), Batches({{4, 5}, {6, 7}}));
  EXPECT_EQ(batches_of(2, false, false), Batches({{8, 9}, {10, 11}}));
  EXPECT_EQ(batches_of(3, false, false), Batches({{12, 13}, {14}}));
}

TEST(ItemSampler, DocumentedExampleDropLast) {
  EXPECT_EQ(batches_of(0, true, false), Batches({{0, 1}, {2, 3}}));
  EXPECT_EQ(batches_of(1, true, false), Batches({{4, 5}, {6, 7}}));
  EXPECT_EQ(batches_of(2, true, false), Batches({{8, 9}, {10, 11}}));
  EXPECT_EQ(batches_of(3, true, false), Batches({{12, 13}}));
}

TEST(ItemSampler, DocumentedExampleDropUneven) {
  EXPECT_EQ(batches_of(0, false, true), Batches({{0, 1}, {2, 3}}));
  EXPECT_EQ(batches_of(1, false, true), Batches({{4, 5}, {6, 7}}));
  EXPECT_EQ(batches_of(2, false, true), Batches({{8, 9}, {10, 11}}));
  EXPECT_EQ(batches_of(3, false, true), Batches({{12, 13}, {14}}));
}

TEST(ItemSampler, DocumentedExampleDropLastAndUneven) {
  EXPECT_EQ(batches_of(0, true, true), Batches({{0, 1}}));
  EXPECT_EQ(batches_of(1, true, true), Batches({{4, 5}}));
  EXPECT_EQ(batches_of(2, true, true), Batches({{8, 9}}));
  EXPECT_EQ(batches_of(3, true, true), Batches({{12, 13}}));
}

TEST(ItemSampler, UnevenSplitGivesEveryRankTheSameBatchCount) {
  // 10 items, 4 ranks, batch 2: shares 4, 2, 2, 2.
  for (bool drop_last : {false, true}) {
    for (int64_t rank = 0; rank < 4; ++rank) {
      const ItemSampler sampler(at::arange(10, at::kLong), {.batch_size = 2,
                                                            .drop_last = drop_last,
                                                            .rank = rank,
                                                            .world_size = 4,
                                                            .drop_uneven_inputs = true});
      EXPECT_EQ(sampler.num_batches(), 1) << rank;
    }
  }
}

TEST(ItemSampler, ShuffleIsSeededGlobalAndDisjoint) {
  std::vector<int64_t> seen;
  for (int64_t rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(batches_of(rank, false, false, true, 1), batches_of(rank, false, false, true, 1));
    for (const auto& batch : batches_of(rank, false, false, true, 1)) {
      seen.insert(seen.end(), batch.begin(), batch.end());
    }
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int64_t> all(15);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(seen, all);  // every item exactly once across ranks
  EXPECT_NE(batches_of(0, false, false, true, 1), batches_of(0, false, false, true, 2));
  EXPECT_NE(batches_of(0, false, false, true, 1), batches_of(0, false, false, false, 1));
}

TEST(ItemSampler, RowsAreItemsAndBadArgumentsFail) {
  const ItemSampler pairs(at::arange(10, at::kLong).view({5, 2}), {.batch_size = 2});
  EXPECT_EQ(pairs.batches(0)[2].sizes(), at::IntArrayRef({1, 2}));
  EXPECT_THROW(ItemSampler(at::arange(5), {.batch_size = 0}), Error);
  EXPECT_THROW(ItemSampler(at::arange(5), {.rank = 2, .world_size = 2}), Error);
}

}  // namespace
}  // namespace graphloom::sampling
