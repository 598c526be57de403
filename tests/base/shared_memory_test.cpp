// POSIX shared-memory segments: one copy seen by every mapping, names owned by their creator.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "graphloom/base/error.h"
#include "graphloom/base/shared_memory.h"

namespace graphloom {
namespace {

std::string unique_name(const char* tag) {
  return "graphloom-test-" + std::string(tag) + "-" + std::to_string(::getpid());
}

TEST(SharedMemory, CreatorAndReaderShareBytes) {
  const std::string name = unique_name("share");
  auto owner = SharedMemorySegment::create(name, 4096);
  std::memcpy(owner->data(), "hello", 6);
  auto reader = SharedMemorySegment::open(name);
  EXPECT_EQ(reader->size(), 4096u);
  EXPECT_STREQ(reinterpret_cast<const char*>(reader->data()), "hello");
  EXPECT_FALSE(reader->owns_name());
}

TEST(SharedMemory, CreateIsExclusiveAndOwnerRemovesName) {
  const std::string name = unique_name("excl");
  {
    auto owner = SharedMemorySegment::create(name, 64);
    EXPECT_THROW(SharedMemorySegment::create(name, 64), Error);
  }
  EXPECT_THROW(SharedMemorySegment::open(name), Error);
}

TEST(SharedMemory, StaleSegmentCanBeRemoved) {
  const std::string name = unique_name("stale");
  auto owner = SharedMemorySegment::create(name, 64);
  owner->release_ownership();  // as if the process had been killed
  owner.reset();
  EXPECT_TRUE(SharedMemorySegment::remove(name));
  EXPECT_FALSE(SharedMemorySegment::remove(name));
}

TEST(SharedMemory, RejectsBadNames) {
  EXPECT_THROW(SharedMemorySegment::create("a/b", 8), Error);
  EXPECT_THROW(SharedMemorySegment::create("", 8), Error);
}

}  // namespace
}  // namespace graphloom
