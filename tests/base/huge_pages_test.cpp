// Huge-page tensors: aligned, advised, usable, and small ones left ordinary; mappings resized
// with their contents.
#include "graphloom/base/huge_pages.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace graphloom {
namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;

// The VmFlags line of the mapping that contains `address` in /proc/self/smaps.
std::string mapping_flags(const void* address) {
  const auto target = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= target && target < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(HugePages, LargeTensorIsAlignedAdvisedAndUsable) {
  const int64_t n = 3 * 1024 * 1024 + 5;  // 12 MB of int32, not a multiple of 2 MB
  at::Tensor t = empty_on_huge_pages({n}, at::kInt);
  ASSERT_EQ(t.numel(), n);
  EXPECT_EQ(t.scalar_type(), at::kInt);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data_ptr()) % kHugePage, 0u);
  t.copy_(at::arange(n, at::kInt));
  EXPECT_EQ(t[n - 1].item<int32_t>(), n - 1);
  EXPECT_EQ(t.sum(at::kLong).item<int64_t>(), n * (n - 1) / 2);
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  }
  // "hg": the range carries MADV_HUGEPAGE (the kernel sets it whatever the THP mode).
  EXPECT_NE(mapping_flags(t.data_ptr()).find(" hg"), std::string::npos)
      << mapping_flags(t.data_ptr());
}

TEST(HugePages, SmallTensorIsAnOrdinaryAllocation) {
  at::Tensor t = empty_on_huge_pages({1000}, at::kLong);
  EXPECT_EQ(t.numel(), 1000);
  EXPECT_EQ(mapping_flags(t.data_ptr()).find(" hg"), std::string::npos);
}

TEST(HugePages, AResizedMappingKeepsItsContentsAndAlignment) {
  auto* data = static_cast<unsigned char*>(map_huge_pages(2 * kHugePageBytes));
  for (std::size_t i = 0; i < 2 * kHugePageBytes; ++i) data[i] = static_cast<unsigned char>(i);
  // Something right after the mapping, so that growing it has to move it.
  void* neighbour = ::mmap(data + 2 * kHugePageBytes, kHugePageBytes, PROT_READ,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  auto* grown =
      static_cast<unsigned char*>(resize_huge_pages(data, 2 * kHugePageBytes, 4 * kHugePageBytes));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(grown) % kHugePageBytes, 0u);
  if (neighbour != MAP_FAILED) {
    EXPECT_NE(grown, data);
  }
  bool kept = true;
  for (std::size_t i = 0; i < 2 * kHugePageBytes; ++i)
    kept = kept && grown[i] == static_cast<unsigned char>(i);
  EXPECT_TRUE(kept);
  EXPECT_EQ(grown[4 * kHugePageBytes - 1], 0);  // the growth is fresh, zeroed memory
  grown[4 * kHugePageBytes - 1] = 1;
  auto* shrunk =
      static_cast<unsigned char*>(resize_huge_pages(grown, 4 * kHugePageBytes, kHugePageBytes));
  EXPECT_EQ(shrunk, grown);
  EXPECT_EQ(shrunk[kHugePageBytes - 1], static_cast<unsigned char>(kHugePageBytes - 1));
  ::munmap(shrunk, kHugePageBytes);
  if (neighbour != MAP_FAILED) ::munmap(neighbour, kHugePageBytes);
}

}  // namespace
}  // namespace graphloom
