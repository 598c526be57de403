// The large-block cache: small requests pass through, freed blocks are reused best-fit, resized
// when the mapped total would pass the peak in use plus the margin, and the least recently
// freed go when resizing one is not enough.
#include "graphloom/base/large_block_cache.h"

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

#include <cstring>

namespace graphloom {
namespace {

constexpr std::size_t kMB = std::size_t{1} << 20;

TEST(LargeBlockCache, SmallRequestsGoToTheDefaultAllocator) {
  LargeBlockCache cache({.min_block_bytes = 4 * kMB, .margin_bytes = 0});
  c10::DataPtr small = cache.allocate(kMB);
  ASSERT_NE(small.get(), nullptr);
  std::memset(small.get(), 1, kMB);
  EXPECT_EQ(cache.stats().maps, 0);
  EXPECT_EQ(cache.stats().in_use_bytes, 0u);
}

TEST(LargeBlockCache, AFreedBlockIsReusedForTheNextRequestThatFitsIt) {
  LargeBlockCache cache({.min_block_bytes = 4 * kMB, .margin_bytes = 64 * kMB});
  c10::DataPtr first = cache.allocate(10 * kMB);
  std::memset(first.get(), 1, 10 * kMB);  // writable in full
  void* address = first.get();
  EXPECT_GE(cache.stats().in_use_bytes, 10 * kMB);
  first.clear();
  EXPECT_EQ(cache.stats().in_use_bytes, 0u);
  // Slightly bigger still fits (blocks have spare room); much smaller or bigger does not.
  c10::DataPtr again = cache.allocate(10 * kMB + 100);
  EXPECT_EQ(again.get(), address);
  EXPECT_EQ(cache.stats().reuses, 1);
  again.clear();
  c10::DataPtr smaller = cache.allocate(5 * kMB);
  EXPECT_NE(smaller.get(), address);
  c10::DataPtr bigger = cache.allocate(20 * kMB);
  EXPECT_NE(bigger.get(), address);
  const LargeBlockCacheStats stats = cache.stats();
  EXPECT_EQ(stats.maps, 3);
  EXPECT_EQ(stats.reuses, 1);
  EXPECT_EQ(stats.mapped_bytes, stats.in_use_bytes + 12 * kMB);  // the free 10 MB block
}

TEST(LargeBlockCache, BeyondThePeakPlusMarginAFreeBlockIsResizedKeepingItsPages) {
  LargeBlockCache cache({.min_block_bytes = 4 * kMB, .margin_bytes = 10 * kMB});
  c10::DataPtr a = cache.allocate(8 * kMB);
  c10::DataPtr b = cache.allocate(8 * kMB);
  std::memset(a.get(), 7, 8 * kMB);
  a.clear();
  b.clear();
  EXPECT_EQ(cache.stats().peak_in_use_bytes, 20 * kMB);  // two 10 MB blocks
  // 20 MB fits neither, and mapping it beside both would pass the peak + 10 MB: one of them
  // grows to 20 MB instead, with nothing unmapped.
  c10::DataPtr c = cache.allocate(19 * kMB);
  std::memset(c.get(), 1, 19 * kMB);  // writable in full
  LargeBlockCacheStats stats = cache.stats();
  EXPECT_EQ(stats.maps, 2);
  EXPECT_EQ(stats.resizes, 1);
  EXPECT_EQ(stats.unmaps, 0);
  EXPECT_EQ(stats.mapped_bytes, 10 * kMB + 20 * kMB);
  c.clear();
  // 5 MB is too small for the 10 MB block to be reused as is, and a fresh 6 MB block would pass
  // the limit: the 10 MB block shrinks, keeping its contents (it is a's block, written above,
  // or b's, never written: zeros).
  c10::DataPtr d = cache.allocate(5 * kMB);
  const auto* bytes = static_cast<const unsigned char*>(d.get());
  EXPECT_TRUE(bytes[0] == 7 || bytes[0] == 0);
  EXPECT_EQ(bytes[5 * kMB - 1], bytes[0]);
  stats = cache.stats();
  EXPECT_EQ(stats.maps, 2);
  EXPECT_EQ(stats.resizes, 2);
  EXPECT_EQ(stats.mapped_bytes, 6 * kMB + 20 * kMB);
  d.clear();
  EXPECT_EQ(cache.stats().in_use_bytes, 0u);
}

TEST(LargeBlockCache, LeastRecentlyFreedBlocksAreUnmappedWhenResizingIsNotEnough) {
  LargeBlockCache cache({.min_block_bytes = 4 * kMB, .margin_bytes = 0});
  c10::DataPtr a = cache.allocate(8 * kMB);
  c10::DataPtr b = cache.allocate(8 * kMB);
  a.clear();  // freed first
  b.clear();
  // 30 MB: a 10 MB block grows to it, and the other goes to stay under the new peak (30 MB).
  c10::DataPtr c = cache.allocate(29 * kMB);
  std::memset(c.get(), 1, 29 * kMB);
  LargeBlockCacheStats stats = cache.stats();
  EXPECT_EQ(stats.resizes, 1);
  EXPECT_EQ(stats.unmaps, 1);
  EXPECT_EQ(stats.peak_in_use_bytes, 30 * kMB);
  EXPECT_EQ(stats.mapped_bytes, 30 * kMB);
  c.clear();
  stats = cache.stats();
  EXPECT_EQ(stats.in_use_bytes, 0u);
  EXPECT_EQ(stats.mapped_bytes, 30 * kMB);  // cached for the next step
}

TEST(LargeBlockCache, RawAllocationsOfAnySizeGoBackThroughTheRawDeleter) {
  LargeBlockCache cache({.min_block_bytes = 4 * kMB, .margin_bytes = 64 * kMB});
  void* small = cache.raw_allocate(kMB);
  void* large = cache.raw_allocate(6 * kMB);
  std::memset(large, 1, 6 * kMB);
  EXPECT_EQ(cache.stats().in_use_bytes, 8 * kMB);
  cache.raw_deallocate(small);
  cache.raw_deallocate(large);
  EXPECT_EQ(cache.stats().in_use_bytes, 0u);
  EXPECT_EQ(cache.raw_allocate(6 * kMB), large);  // cached
  cache.raw_deallocate(large);
}

TEST(LargeBlockCache, InstalledItServesLibtorchsLargeTensors) {
  install_large_block_cache();
  install_large_block_cache();  // once only
  const int64_t maps = large_block_cache_stats().maps;
  {
    at::Tensor large = at::ones({2 * static_cast<int64_t>(kMB)});  // 8 MB of float32
    EXPECT_EQ(large.sum().item<double>(), 2.0 * kMB);
    EXPECT_EQ(large_block_cache_stats().maps, maps + 1);
  }
  at::Tensor again = at::empty({2 * static_cast<int64_t>(kMB)});
  EXPECT_EQ(large_block_cache_stats().maps, maps + 1);  // the freed block again
  EXPECT_NE(c10::GetCPUAllocator(), c10::GetDefaultCPUAllocator());
}

}  // namespace
}  // namespace graphloom
