// Best fit among the cached blocks; when none fits and a fresh mapping would pass the limit, the
// free block closest in size is resized instead (mremap keeps its pages), and the least recently
// freed go out only for what is still missing. Capacities are whole huge pages with 1/32 spare,
// so that the next step's slightly bigger tensor fits its block.
#include "graphloom/base/large_block_cache.h"

#include <c10/core/CPUAllocator.h>
#include <fmt/format.h>
#include <sys/mman.h>

#include <atomic>
#include <iterator>
#include <string>
#include <unordered_map>

#include "graphloom/base/huge_pages.h"

namespace graphloom {

struct LargeBlockCache::Block {
  const LargeBlockCache* owner;
  void* data;
  std::size_t capacity;
  std::list<Block*>::iterator age;  // position in free_by_age_ while free
};

namespace {

// Blocks in use by address, for all caches: release() gets only the data pointer.
struct Registry {
  std::mutex mutex;
  std::unordered_map<void*, LargeBlockCache::Block*> blocks;
};

Registry& registry() {
  static auto* instance = new Registry();  // never destroyed: tensors can outlive statics
  return *instance;
}

}  // namespace

LargeBlockCache::LargeBlockCache(LargeBlockCacheOptions options) : options_(options) {}

LargeBlockCache::~LargeBlockCache() {
  // Blocks still in use are left mapped: their tensors outlive the cache.
  for (Block* block : free_by_age_) {
    ::munmap(block->data, block->capacity);
    delete block;
  }
}

c10::DataPtr LargeBlockCache::allocate(std::size_t bytes) {
  if (bytes < options_.min_block_bytes) return c10::GetDefaultCPUAllocator()->allocate(bytes);
  const std::lock_guard<std::mutex> lock(mutex_);
  Block* block = nullptr;
  // A much bigger block would hold memory that a bigger request could use.
  const auto fit = free_by_size_.lower_bound(bytes);
  if (fit != free_by_size_.end() && fit->first <= bytes + bytes / 4 + kHugePageBytes) {
    block = fit->second;
    free_by_size_.erase(fit);
    free_by_age_.erase(block->age);
    ++stats_.reuses;
  } else {
    const std::size_t capacity = round_up_to_huge_pages(bytes + bytes / 32);
    stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes + capacity);
    block = resize_a_free_block(capacity);
    if (block == nullptr) {
      make_room(capacity);
      block = new Block{this, map_huge_pages(capacity), capacity, {}};
      stats_.mapped_bytes += capacity;
      stats_.fresh_bytes += capacity;
      ++stats_.maps;
    }
  }
  stats_.in_use_bytes += block->capacity;
  stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
  {
    Registry& r = registry();
    const std::lock_guard<std::mutex> registry_lock(r.mutex);
    r.blocks.emplace(block->data, block);
  }
  return {block->data, block->data, &LargeBlockCache::release, c10::Device(c10::DeviceType::CPU)};
}

void LargeBlockCache::release(void* data) {
  Block* block = nullptr;
  {
    Registry& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.blocks.find(data);
    if (it != r.blocks.end()) {
      block = it->second;
      r.blocks.erase(it);
    }
  }
  if (block != nullptr) {
    block->owner->give_back(block);
  } else {  // a small allocation, raw-freed through this allocator
    c10::GetDefaultCPUAllocator()->raw_deleter()(data);
  }
}

void LargeBlockCache::give_back(Block* block) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  stats_.in_use_bytes -= block->capacity;
  block->age = free_by_age_.insert(free_by_age_.end(), block);
  free_by_size_.emplace(block->capacity, block);
}

LargeBlockCache::Block* LargeBlockCache::resize_a_free_block(std::size_t capacity) const {
  const std::size_t limit = stats_.peak_in_use_bytes + options_.margin_bytes;
  if (free_by_size_.empty() || stats_.mapped_bytes + capacity <= limit) return nullptr;
  // The free block closest in size keeps the most of its pages: shrinking zeroes none, growing
  // only the difference.
  auto closest = free_by_size_.lower_bound(capacity);
  if (closest == free_by_size_.end() ||
      (closest != free_by_size_.begin() &&
       capacity - std::prev(closest)->first < closest->first - capacity)) {
    closest = std::prev(closest);
  }
  Block* block = closest->second;
  free_by_size_.erase(closest);
  free_by_age_.erase(block->age);
  if (capacity > block->capacity) make_room(capacity - block->capacity);
  try {
    block->data = resize_huge_pages(block->data, block->capacity, capacity);
  } catch (...) {
    ::munmap(block->data, block->capacity);
    stats_.mapped_bytes -= block->capacity;
    delete block;
    throw;
  }
  stats_.mapped_bytes = stats_.mapped_bytes - block->capacity + capacity;
  stats_.fresh_bytes += capacity > block->capacity ? capacity - block->capacity : 0;
  block->capacity = capacity;
  ++stats_.resizes;
  return block;
}

void LargeBlockCache::make_room(std::size_t extra) const {
  const std::size_t limit = stats_.peak_in_use_bytes + options_.margin_bytes;
  while (!free_by_age_.empty() && stats_.mapped_bytes + extra > limit) {
    Block* oldest = free_by_age_.front();
    free_by_age_.pop_front();
    auto [first, last] = free_by_size_.equal_range(oldest->capacity);
    while (first->second != oldest) ++first;
    free_by_size_.erase(first);
    ::munmap(oldest->data, oldest->capacity);
    stats_.mapped_bytes -= oldest->capacity;
    ++stats_.unmaps;
    delete oldest;
  }
}

LargeBlockCacheStats LargeBlockCache::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

namespace {
std::atomic<const LargeBlockCache*> installed{nullptr};
}  // namespace

void install_large_block_cache() {
  static const bool done = [] {
    auto* cache = new LargeBlockCache();
    // Above the default allocator's priority (0), so that the replacement holds.
    c10::SetCPUAllocator(cache, /*priority=*/1);
    installed = cache;
    return true;
  }();
  (void)done;
}

LargeBlockCacheStats large_block_cache_stats() {
  const LargeBlockCache* cache = installed;
  return cache != nullptr ? cache->stats() : LargeBlockCacheStats{};
}

std::string describe(const LargeBlockCacheStats& stats) {
  return fmt::format(
      "{:.0f} MB mapped, peak {:.0f} MB in use; {} maps, {} resizes, {} unmaps, {} reuses; {:.0f} "
      "MB fresh",
      stats.mapped_bytes / 1e6, stats.peak_in_use_bytes / 1e6, stats.maps, stats.resizes,
      stats.unmaps, stats.reuses, stats.fresh_bytes / 1e6);
}

}  // namespace graphloom
