// Shared-memory segments: one copy seen by every mapping, names owned by their creator, files in
// the directory GRAPHLOOM_SHM_DIR names (else /dev/shm).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

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

// Sets GRAPHLOOM_SHM_DIR for one test and restores the previous value.
class ShmDirectory {
 public:
  explicit ShmDirectory(const std::string& directory) {
    if (const char* old = std::getenv("GRAPHLOOM_SHM_DIR")) previous_ = old;
    ::setenv("GRAPHLOOM_SHM_DIR", directory.c_str(), 1);
  }
  ~ShmDirectory() {
    if (previous_.empty()) {
      ::unsetenv("GRAPHLOOM_SHM_DIR");
    } else {
      ::setenv("GRAPHLOOM_SHM_DIR", previous_.c_str(), 1);
    }
  }

 private:
  std::string previous_;
};

TEST(SharedMemory, SegmentsLiveInTheConfiguredDirectory) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / unique_name("shm-dir");
  std::filesystem::create_directories(directory);
  const std::string name = unique_name("elsewhere");
  const std::string before = shared_memory_directory();
  {
    const ShmDirectory configured(directory.string() + "/");
    EXPECT_EQ(shared_memory_directory(), directory.string());
    auto owner = SharedMemorySegment::create(name, 4096);
    std::memcpy(owner->data(), "rows", 5);
    EXPECT_TRUE(std::filesystem::exists(directory / name));
    EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + name));
    EXPECT_EQ(SharedMemorySegment::path(name), (directory / name).string());
    SharedMemorySegment::rename(name, name + "-renamed");
    EXPECT_TRUE(SharedMemorySegment::exists(name + "-renamed"));
    EXPECT_FALSE(SharedMemorySegment::exists(name));
    auto reader = SharedMemorySegment::open(name + "-renamed");
    EXPECT_STREQ(reinterpret_cast<const char*>(reader->data()), "rows");
    EXPECT_TRUE(SharedMemorySegment::remove(name + "-renamed"));
  }
  EXPECT_EQ(shared_memory_directory(), before);
  EXPECT_TRUE(std::filesystem::is_empty(directory));
  std::filesystem::remove(directory);
}

TEST(SharedMemory, AMissingDirectoryIsNamedInTheError) {
  const ShmDirectory configured("/nonexistent/graphloom-shm");
  try {
    SharedMemorySegment::create(unique_name("nowhere"), 64);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("GRAPHLOOM_SHM_DIR"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("/nonexistent/graphloom-shm"), std::string::npos);
  }
}

// What the mount table says matches what the kernel does: a touched segment is mapped with
// 2 MB pages exactly when shared_memory_on_huge_pages() says so. /proc is no tmpfs at all.
TEST(SharedMemory, HugePagesAsTheMountSays) {
  EXPECT_FALSE(shared_memory_on_huge_pages("/proc"));
  const std::string name = unique_name("huge");
  auto segment = SharedMemorySegment::create(name, 8 << 20);
  std::memset(segment->data(), 1, segment->size());
  const auto begin = reinterpret_cast<uintptr_t>(segment->data());
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_segment = false;
  int64_t pmd_mapped_kb = -1;
  while (std::getline(smaps, line)) {
    if (const auto dash = line.find('-'); dash != std::string::npos && dash <= 16 &&
                                          std::isxdigit(static_cast<unsigned char>(line[0]))) {
      in_segment = std::stoull(line.substr(0, dash), nullptr, 16) == begin;
    } else if (in_segment && line.rfind("ShmemPmdMapped:", 0) == 0) {
      pmd_mapped_kb = std::stoll(line.substr(15));
    }
  }
  ASSERT_GE(pmd_mapped_kb, 0) << "no smaps entry for the segment";
  EXPECT_EQ(pmd_mapped_kb > 0, shared_memory_on_huge_pages(shared_memory_directory()))
      << pmd_mapped_kb << " kB on huge pages in " << shared_memory_directory();
}

}  // namespace
}  // namespace graphloom
