// Process settings: what memory is left, and freed malloc blocks stay in the heap for the next
// request.
#include "graphloom/base/system.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace graphloom {
namespace {

// What this process may still use: known here, and never more than the machine's memory.
TEST(System, AvailableMemoryIsKnownAndBelowTheMachinesMemory) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t total_kb = 0;
  meminfo >> key >> total_kb;
  ASSERT_EQ(key, "MemTotal:");
  const int64_t available = available_memory_bytes();
  EXPECT_GT(available, 0);
  EXPECT_LE(available, total_kb * 1024);
}

// A 16 MB block (a graph server's response is 4 MB) comes from the heap rather than a mapping
// of its own, and once freed stays there: the next request of its size gets the same memory,
// whose pages are already faulted in. glibc's defaults map it and unmap it on free.
TEST(System, FreedHeapBlocksStayForTheNextRequest) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc's malloc, which this test tunes";
#endif
  keep_freed_heap_pages();
  constexpr std::size_t kBytes = std::size_t{16} << 20;
  // Keeps the compiler from eliding the allocations.
  const auto escape = [](void* p) { asm volatile("" : : "r"(p) : "memory"); };
  const struct mallinfo2 before = mallinfo2();
  void* block = std::malloc(kBytes);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBytes);
  escape(block);
  const struct mallinfo2 held = mallinfo2();
  EXPECT_EQ(held.hblkhd, before.hblkhd) << "the block was given a mapping of its own";
  std::free(block);
  // Against the heap while the block was held, not before it: earlier tests in this process
  // may have left a free 16 MB in the heap, which the block then took without growing it.
  EXPECT_GE(mallinfo2().arena, held.arena) << "the heap was trimmed after the free";
  void* again = std::malloc(kBytes);
  escape(again);
  EXPECT_EQ(again, block);
  std::free(again);
}

}  // namespace
}  // namespace graphloom
