// The hot-row cache: exact rows whatever hits or misses, SIEVE's eviction order, the static
// cache's contents, bypassed rows, concurrent gathers, and size parsing.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <thread>

#include "graphloom/base/error.h"
#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/tensor_feature_source.h"

namespace graphloom::features {
namespace {

// Counts the rows the backing source was asked for.
class CountingSource : public TensorFeatureSource {
 public:
  using FeatureSource::gather;
  using TensorFeatureSource::TensorFeatureSource;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override {
    requested += ids.numel();
    TensorFeatureSource::gather(name, ids, out);
  }
  mutable std::atomic<int64_t> requested{0};
};

at::Tensor ids_of(std::vector<int64_t> ids) { return at::tensor(ids, at::kLong); }

TEST(CachedFeatureSource, SieveSparesVisitedRowsAndEvictsTheOldestUnvisited) {
  const at::Tensor table = at::arange(10 * 4, at::kFloat).view({10, 4});
  const CountingSource backing({{"feat", table}});
  // One shard of three rows, so the eviction order is SIEVE's exactly.
  const CachedFeatureSource cache(
      backing, "feat", {.policy = CachePolicy::kSieve, .capacity_bytes = 3 * 4 * 4, .shards = 1});
  EXPECT_EQ(cache.capacity_rows(), 3);
  EXPECT_TRUE(
      at::equal(cache.gather("feat", ids_of({1, 2, 3})), table.index_select(0, ids_of({1, 2, 3}))));
  EXPECT_TRUE(at::equal(cache.gather("feat", ids_of({1})), table[1].unsqueeze(0)));  // visits 1
  cache.gather("feat", ids_of({4}));  // hand at 1 (visited: spared), then evicts 2
  backing.requested = 0;
  const at::Tensor kept = cache.gather("feat", ids_of({1, 3, 4}));  // FIFO would have lost 1
  EXPECT_TRUE(at::equal(kept, table.index_select(0, ids_of({1, 3, 4}))));
  EXPECT_EQ(backing.requested.load(), 0);
  EXPECT_TRUE(at::equal(cache.gather("feat", ids_of({2})), table[2].unsqueeze(0)));
  EXPECT_EQ(backing.requested.load(), 1);
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1 + 3);
  EXPECT_EQ(stats.misses, 3 + 1 + 1);
  EXPECT_EQ(cache.cached_rows(), 3);
}

TEST(CachedFeatureSource, StaticCacheHoldsTheGivenRowsAndBypassesTheLocalRange) {
  const at::Tensor table = at::randn({100, 8});
  const CountingSource backing({{"feat", table}, {"label", at::arange(100, at::kLong)}});
  // Local rows [0, 50) are never cached; the budget holds 10 rows: the first 10 candidates
  // outside the local range, in the given order.
  const at::Tensor order = at::arange(99, -1, -1, at::kLong);
  const CachedFeatureSource cache(backing, "feat",
                                  {.policy = CachePolicy::kStatic,
                                   .capacity_bytes = 10 * 8 * 4,
                                   .static_rows = order,
                                   .bypass_begin = 0,
                                   .bypass_end = 50});
  backing.requested = 0;
  const at::Tensor ids = ids_of({99, 90, 89, 5, 95});
  EXPECT_TRUE(at::equal(cache.gather("feat", ids), table.index_select(0, ids)));
  const CacheStats stats = cache.stats(/*reset=*/true);
  EXPECT_EQ(stats.hits, 3);      // 99, 90, 95
  EXPECT_EQ(stats.misses, 1);    // 89
  EXPECT_EQ(stats.bypassed, 1);  // 5
  EXPECT_EQ(backing.requested.load(), 2);
  EXPECT_EQ(cache.stats().hits, 0);
  // All hits (in any order, repeated) take the in-memory table's gather.
  const at::Tensor cached = ids_of({95, 99, 91, 95, 90});
  backing.requested = 0;
  EXPECT_TRUE(at::equal(cache.gather("feat", cached), table.index_select(0, cached)));
  EXPECT_EQ(backing.requested.load(), 0);
  // Ids outside the table are the backing source's to refuse.
  EXPECT_THROW(cache.gather("feat", ids_of({99, 100})), Error);
  EXPECT_THROW(cache.gather("feat", ids_of({-1, 99})), Error);
  // Other names pass through untouched.
  EXPECT_TRUE(at::equal(cache.gather("label", ids), ids));
}

TEST(CachedFeatureSource, ConcurrentGathersReturnExactRows) {
  const at::Tensor table = at::randn({5000, 16}).to(at::kHalf);
  const TensorFeatureSource backing({{"feat", table}});
  const CachedFeatureSource cache(backing, "feat",
                                  {.policy = CachePolicy::kSieve, .capacity_bytes = 500 * 16 * 4});
  const at::Tensor expected = table.to(at::kFloat);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        // Skewed ids so that some rows are hot.
        const at::Tensor ids =
            (at::rand({300}).pow(3) * 5000).to(at::kLong).clamp_max(4999) + 0 * t;
        if (!at::equal(cache.gather("feat", ids), expected.index_select(0, ids))) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(cache.stats().hit_rate(), 0.2);
  EXPECT_LE(cache.cached_rows(), 500);
}

TEST(CachedFeatureSource, RowsByReferenceCountPutsTheMostReferencedFirst) {
  const at::Tensor order = rows_by_reference_count(ids_of({3, 1, 3, 3, 1, 0}), 5);
  EXPECT_EQ(order[0].item<int64_t>(), 3);
  EXPECT_EQ(order[1].item<int64_t>(), 1);
  EXPECT_EQ(order[2].item<int64_t>(), 0);
}

TEST(CachedFeatureSource, ParsesSizesAndPolicies) {
  EXPECT_EQ(parse_byte_size("1000"), 1000);
  EXPECT_EQ(parse_byte_size("2K"), 2048);
  EXPECT_EQ(parse_byte_size("1.5G"), int64_t(1.5 * (1 << 30)));
  EXPECT_EQ(parse_byte_size("512MiB"), 512LL << 20);
  EXPECT_EQ(parse_byte_size("3mb"), 3LL << 20);
  EXPECT_THROW(parse_byte_size("lots"), Error);
  EXPECT_THROW(parse_byte_size("5X"), Error);
  EXPECT_EQ(enum_from_name<CachePolicy>("cache_policy", "degree"), CachePolicy::kStatic);
  EXPECT_EQ(enum_from_name<CachePolicy>("cache_policy", "sieve"), CachePolicy::kSieve);
  EXPECT_EQ(enum_from_name<CachePolicy>("cache_policy", "lru"), CachePolicy::kLru);
  EXPECT_THROW(enum_from_name<CachePolicy>("cache_policy", "arc"), OptionError);
}

}  // namespace
}  // namespace graphloom::features
