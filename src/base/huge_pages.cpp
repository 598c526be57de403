// Anonymous mappings aligned to the huge-page size: THP only backs whole, aligned 2 MB ranges,
// so an unaligned mapping would leave its ends (and a small table entirely) on 4 KB pages.
#include "graphloom/base/huge_pages.h"

#include <ATen/ATen.h>
#include <sys/mman.h>

#include <cstdint>

#include "graphloom/base/error.h"

namespace graphloom {

void* map_huge_pages(std::size_t length) {
  GL_CHECK(length % kHugePageBytes == 0, "map_huge_pages: {} is not a multiple of 2 MB", length);
  // Over-allocate by one huge page, then unmap the slack on both sides of the aligned range.
  void* reserved = ::mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  GL_CHECK(reserved != MAP_FAILED, "cannot map {} bytes of memory", length);
  const auto begin = reinterpret_cast<std::uintptr_t>(reserved);
  const std::uintptr_t aligned = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned > begin) ::munmap(reserved, aligned - begin);
  const std::uintptr_t end = begin + length + kHugePageBytes;
  if (end > aligned + length)
    ::munmap(reinterpret_cast<void*>(aligned + length), end - aligned - length);
  void* data = reinterpret_cast<void*>(aligned);
  ::madvise(data, length, MADV_HUGEPAGE);  // advisory: a no-op where THP is off
  return data;
}

at::Tensor empty_on_huge_pages(at::IntArrayRef sizes, at::ScalarType dtype) {
  int64_t elements = 1;
  for (const int64_t size : sizes) {
    GL_CHECK(size >= 0, "negative tensor size {}", size);
    elements *= size;
  }
  const std::size_t bytes = static_cast<std::size_t>(elements) * c10::elementSize(dtype);
  // A smaller table would still take a whole huge page once touched.
  if (bytes < kHugePageBytes) return at::empty(sizes, dtype);
  const std::size_t length = round_up_to_huge_pages(bytes);
  void* data = map_huge_pages(length);
  return at::from_blob(
      data, sizes, [length](void* p) { ::munmap(p, length); }, at::TensorOptions().dtype(dtype));
}

}  // namespace graphloom
