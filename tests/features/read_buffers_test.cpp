// ReadBuffers: the disk source's read buffers are aligned, reused by the next gather that fits
// in one, and at most `kept` of them are held between gathers (the smallest freed first).
#include "read_buffers.h"  // internal to the features module

#include <gtest/gtest.h>

#include <cstdint>

namespace graphloom::features {
namespace {

TEST(ReadBuffers, ABufferIsAlignedAndAtLeastTheSizeAsked) {
  ReadBuffers pool(4096, 2);
  for (const int64_t bytes : {0, 1, 4096, 1'000'003}) {
    const ReadBuffers::Lease lease = pool.take(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(lease.data()) % 4096, 0u) << bytes;
    EXPECT_GE(lease.bytes(), bytes);
    EXPECT_EQ(lease.bytes() % 4096, 0);
  }
}

TEST(ReadBuffers, TheNextGatherThatFitsReusesTheMemory) {
  ReadBuffers pool(4096, 2);
  std::byte* first = nullptr;
  {
    const ReadBuffers::Lease lease = pool.take(100'000);
    first = lease.data();
  }
  EXPECT_EQ(pool.kept(), 1u);
  {
    const ReadBuffers::Lease smaller = pool.take(50'000);
    EXPECT_EQ(smaller.data(), first);
    EXPECT_EQ(pool.kept(), 0u);  // leased, not kept
    const ReadBuffers::Lease concurrent = pool.take(50'000);
    EXPECT_NE(concurrent.data(), first);
  }
  EXPECT_EQ(pool.kept(), 2u);
  const ReadBuffers::Lease larger = pool.take(1'000'000);  // fits none: a new buffer
  EXPECT_NE(larger.data(), first);
}

TEST(ReadBuffers, KeepsAtMostItsLimitAndFreesTheSmallest) {
  ReadBuffers pool(64, 2);
  std::byte* large = nullptr;
  int64_t large_bytes = 0;
  {
    const ReadBuffers::Lease small = pool.take(1'000);
    const ReadBuffers::Lease largest = pool.take(100'000);
    const ReadBuffers::Lease middle = pool.take(10'000);
    large = largest.data();
    large_bytes = largest.bytes();
  }  // returned in reverse: the small one last, over the limit
  EXPECT_EQ(pool.kept(), 2u);
  // The 1,000-byte buffer was freed: 50,000 bytes get the largest, then 5,000 the middle one
  // (not a fresh buffer of 6,250).
  const ReadBuffers::Lease big = pool.take(50'000);
  EXPECT_EQ(big.data(), large);
  EXPECT_EQ(big.bytes(), large_bytes);
  const ReadBuffers::Lease mid = pool.take(5'000);
  EXPECT_GE(mid.bytes(), 10'000);
  EXPECT_LT(mid.bytes(), 100'000);
  EXPECT_EQ(pool.kept(), 0u);
}

TEST(ReadBuffers, ARequestFreesKeptBuffersFarLargerThanIt) {
  ReadBuffers pool(4096, 4);
  { const ReadBuffers::Lease fill = pool.take(10'000'000); }  // e.g. a cache fill's slice
  EXPECT_EQ(pool.kept(), 1u);
  {
    const ReadBuffers::Lease batch = pool.take(100'000);
    EXPECT_LT(batch.bytes(), 1'000'000);  // a buffer of its own size, not the fill's
    EXPECT_EQ(pool.kept(), 0u);           // the fill's was freed
  }
  EXPECT_EQ(pool.kept(), 1u);
}

TEST(ReadBuffers, ADiscardedBufferIsNotKept) {
  ReadBuffers pool(4096, 4);
  {
    ReadBuffers::Lease lease = pool.take(4096);
    lease.discard();
  }
  EXPECT_EQ(pool.kept(), 0u);
}

}  // namespace
}  // namespace graphloom::features
