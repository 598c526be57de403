// Tensors on transparent huge pages, for the tables that are read at random (graph structure,
// node -> local id maps, feature rows): on 4 KB pages nearly every random access also misses
// the TLB, and the page walk costs as much as the access (`bench sample --data er`, 15,10,5:
// ~20% more seeds/s with the graph and relabel table on 2 MB pages).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>

namespace graphloom {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

inline std::size_t round_up_to_huge_pages(std::size_t bytes) {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

// A fresh anonymous mapping of `length` bytes (a multiple of kHugePageBytes), 2 MB aligned and
// advised for huge pages; the caller munmap()s it. Throws graphloom::Error when out of memory.
void* map_huge_pages(std::size_t length);

// Resizes such a mapping to `new_length` (a multiple of kHugePageBytes) and returns its address,
// which may change. The first min(length, new_length) bytes keep their pages and contents; only
// growth is faulted in (and zeroed by the kernel) when touched. Throws graphloom::Error when
// out of memory; `data` is then unchanged.
void* resize_huge_pages(void* data, std::size_t length, std::size_t new_length);

// An uninitialised contiguous tensor. From 2 MB up it has its own anonymous mapping, 2 MB
// aligned and advised for huge pages (ordinary memory where THP is "never"), unmapped when the
// last reference goes; below that it is an ordinary allocation.
at::Tensor empty_on_huge_pages(at::IntArrayRef sizes, at::ScalarType dtype);

}  // namespace graphloom
