// LargeBlockCache: libtorch's CPU allocator for graphloom's processes. A training step
// allocates and frees the same few large tensors (a first layer's activations and gradients:
// ~100 MB each on the reference graph) every step. From one malloc heap those fragment it: the
// small allocations of the loader and the autograd engine split freed blocks, and the heap
// grew to ~1.5x the live peak (`bench train --data er`). Fresh mmap()s instead page-fault and
// zero every block every step (half the throughput). This cache keeps freed large blocks,
// each its own mapping on huge pages, reuses the best-fitting one, resizes a cached block in
// place of mapping a new one once the mapped total would exceed the peak in use by more than a
// margin, and only then unmaps the least recently used.
#pragma once

#include <c10/core/Allocator.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>

namespace graphloom {

struct LargeBlockCacheOptions {
  std::size_t min_block_bytes = std::size_t{4} << 20;  // smaller: the default CPU allocator
  // Mapped bytes (in use + cached) may exceed the peak in use by this much before the least
  // recently freed blocks are unmapped.
  std::size_t margin_bytes = std::size_t{96} << 20;
};

struct LargeBlockCacheStats {
  std::size_t mapped_bytes = 0;  // in use + cached
  std::size_t in_use_bytes = 0;
  std::size_t peak_in_use_bytes = 0;
  std::size_t fresh_bytes = 0;  // mapped or grown: zeroed by the kernel when first touched
  int64_t maps = 0;             // blocks mapped
  int64_t reuses = 0;           // allocations served from the cache
  int64_t resizes = 0;          // cached blocks resized for a request none fitted
  int64_t unmaps = 0;           // cached blocks given back to the kernel
};

class LargeBlockCache final : public c10::Allocator {
 public:
  explicit LargeBlockCache(LargeBlockCacheOptions options = {});
  ~LargeBlockCache() override;
  LargeBlockCache(const LargeBlockCache&) = delete;
  LargeBlockCache& operator=(const LargeBlockCache&) = delete;

  c10::DataPtr allocate(std::size_t bytes) override;
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
  // Frees what allocate() gave, by address: libtorch's raw_allocate() users (oneDNN's bfloat16
  // kernels) need one deleter for every allocation, which the context is then the data of.
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  LargeBlockCacheStats stats() const;

  struct Block;  // a mapping and where it stands (private to the implementation)

 private:
  static void release(void* data);
  void give_back(Block* block) const;
  // The free block closest in size, resized to `capacity`, when mapping a fresh one would pass
  // the limit; nullptr otherwise.
  Block* resize_a_free_block(std::size_t capacity) const;
  // Unmaps least recently freed blocks until `extra` more bytes fit under the limit.
  void make_room(std::size_t extra) const;

  LargeBlockCacheOptions options_;
  mutable std::mutex mutex_;
  mutable std::multimap<std::size_t, Block*> free_by_size_;
  mutable std::list<Block*> free_by_age_;  // least recently freed first
  mutable LargeBlockCacheStats stats_;
};

// Installs one LargeBlockCache, never destroyed, as libtorch's CPU allocator (tensors can
// outlive static destructors); later calls do nothing.
void install_large_block_cache();

// The installed cache's figures; all zero when none is installed.
LargeBlockCacheStats large_block_cache_stats();

// "453 MB mapped, peak 403 MB in use; 17 maps, 1 resizes, 0 unmaps, 469 reuses; 476 MB fresh"
std::string describe(const LargeBlockCacheStats& stats);

}  // namespace graphloom
