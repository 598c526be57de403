// ItemSampler: GraphBolt DistributedItemSampler's documented example (15 items, 4 replicas,
// batch 2) for every combination of drop_last and drop_uneven_inputs, and seeded shuffling.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

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

TEST(ItemSampler, WeightsDrawItemsInProportionAndTheSameSequenceOnEveryRank) {
  // Items 0..3 weighted 0, 1, 2, 5: over many draws the frequencies follow, item 0 never comes.
  const at::Tensor weights = at::tensor({0.0, 1.0, 2.0, 5.0}, at::kDouble);
  const at::Tensor items = at::arange(4, at::kLong);
  std::vector<int64_t> counts(4, 0);
  int64_t drawn = 0;
  for (uint64_t epoch = 0; epoch < 2000; ++epoch) {
    const ItemSampler sampler(items, {.batch_size = 3, .seed = 9, .weights = weights});
    for (const at::Tensor& batch : sampler.batches(epoch)) {
      for (int64_t i = 0; i < batch.numel(); ++i) ++counts[batch[i].item<int64_t>()];
      drawn += batch.numel();
    }
  }
  EXPECT_EQ(drawn, 8000);  // num_items per epoch
  EXPECT_EQ(counts[0], 0);
  for (int64_t i = 1; i < 4; ++i) {
    const double expected = 8000.0 * weights[i].item<double>() / 8.0;
    EXPECT_NEAR(counts[i], expected, 5 * std::sqrt(expected)) << i;
  }
  // Two ranks take their shares of one draw: together they are the one-rank sequence.
  const ItemSampler whole(at::arange(100, at::kLong),
                          {.batch_size = 100, .seed = 4, .weights = at::rand({100})});
  std::vector<int64_t> joined;
  for (int64_t rank = 0; rank < 2; ++rank) {
    const ItemSampler share(at::arange(100, at::kLong), {.batch_size = 10,
                                                         .rank = rank,
                                                         .world_size = 2,
                                                         .seed = 4,
                                                         .weights = whole.options().weights});
    for (const at::Tensor& batch : share.batches(3)) {
      joined.insert(joined.end(), batch.data_ptr<int64_t>(),
                    batch.data_ptr<int64_t>() + batch.numel());
    }
  }
  const at::Tensor one = whole.batches(3)[0];
  EXPECT_EQ(joined, std::vector<int64_t>(one.data_ptr<int64_t>(), one.data_ptr<int64_t>() + 100));
}

TEST(ItemSampler, BadWeightsAreRefused) {
  const at::Tensor items = at::arange(3, at::kLong);
  EXPECT_THROW(ItemSampler(items, {.weights = at::ones({2})}), Error);             // count
  EXPECT_THROW(ItemSampler(items, {.weights = at::ones({3}, at::kLong)}), Error);  // dtype
  EXPECT_THROW(ItemSampler(items, {.weights = at::tensor({1.0, -1.0, 1.0})}), Error);
  EXPECT_THROW(ItemSampler(items, {.weights = at::zeros({3})}), Error);  // nothing to draw
}

TEST(ItemSampler, RowsAreItemsAndBadArgumentsFail) {
  const ItemSampler pairs(at::arange(10, at::kLong).view({5, 2}), {.batch_size = 2});
  EXPECT_EQ(pairs.batches(0)[2].sizes(), at::IntArrayRef({1, 2}));
  EXPECT_THROW(ItemSampler(at::arange(5), {.batch_size = 0}), Error);
  EXPECT_THROW(ItemSampler(at::arange(5), {.rank = 2, .world_size = 2}), Error);
}

}  // namespace
}  // namespace graphloom::sampling
