// Anonymous mappings aligned to the huge-page size: THP only backs whole, aligned 2 MB ranges,
// so an unaligned mapping would leave its ends (and a small table entirely) on 4 KB pages.
#include "graphloom/base/huge_pages.h"

#include <ATen/ATen.h>
#include <sys/mman.h>

#include <cstdint>

#include "graphloom/base/error.h"

namespace graphloom {

namespace {

// A 2 MB aligned range of `length` bytes: over-map by one huge page, then unmap the slack on
// both sides.
void* map_aligned(std::size_t length, int protection) {
  GL_CHECK(length % kHugePageBytes == 0, "map_huge_pages: {} is not a multiple of 2 MB", length);
  void* reserved =
      ::mmap(nullptr, length + kHugePageBytes, protection, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  GL_CHECK(reserved != MAP_FAILED, "cannot map {} bytes of memory", length);
  const auto begin = reinterpret_cast<std::uintptr_t>(reserved);
  const std::uintptr_t aligned = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned > begin) ::munmap(reserved, aligned - begin);
  const std::uintptr_t end = begin + length + kHugePageBytes;
  if (end > aligned + length)
    ::munmap(reinterpret_cast<void*>(aligned + length), end - aligned - length);
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

void* map_huge_pages(std::size_t length) {
  void* data = map_aligned(length, PROT_READ | PROT_WRITE);
  ::madvise(data, length, MADV_HUGEPAGE);  // advisory: a no-op where THP is off
  return data;
}

void* resize_huge_pages(void* data, std::size_t length, std::size_t new_length) {
  GL_CHECK(new_length % kHugePageBytes == 0, "resize_huge_pages: {} is not a multiple of 2 MB",
           new_length);
  // Shrinking, or growing into free address space after the range, keeps the address.
  void* resized = ::mremap(data, length, new_length, 0);
  if (resized == MAP_FAILED) {
    // Move the pages (their page tables, not their contents) onto an aligned range, so that
    // they stay huge; MREMAP_FIXED replaces the placeholder.
    void* target = map_aligned(new_length, PROT_NONE);
    resized = ::mremap(data, length, new_length, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    if (resized == MAP_FAILED) ::munmap(target, new_length);
    GL_CHECK(resized != MAP_FAILED, "cannot grow a mapping of {} bytes to {}", length, new_length);
  }
  if (new_length > length) {
    ::madvise(static_cast<char*>(resized) + length, new_length - length, MADV_HUGEPAGE);
  }
  return resized;
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
