// The hot-row cache: shards of (open-addressing index, eviction policy, row storage).
#include "graphloom/features/cached_feature_source.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "eviction_policy.h"
#include "graphloom/base/error.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/graph/csc_graph.h"

namespace graphloom::features {
namespace {

constexpr int64_t kMaxShards = 64;
// A static cache's dense row -> slot array takes 4 bytes per row of the table: kept when that is
// at most a quarter of the cache's own budget or 16 MiB, and never above 256 MiB (64M rows).
constexpr int64_t kSmallDenseIndexBytes = int64_t{16} << 20;
constexpr int64_t kMaxDenseIndexBytes = int64_t{256} << 20;

bool dense_index_fits(int64_t rows, int64_t capacity_bytes) {
  const int64_t bytes = rows * static_cast<int64_t>(sizeof(int32_t));
  return bytes <= kMaxDenseIndexBytes &&
         bytes <= std::max(kSmallDenseIndexBytes, capacity_bytes / 4);
}

uint64_t mix(int64_t row) {
  uint64_t x = static_cast<uint64_t>(row) + 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

// One shard: rows [first_slot, first_slot + capacity) of the storage, their index and, in a
// dynamic cache, the policy that picks the slot to reuse.
struct CachedFeatureSource::Shard {
  std::mutex mutex;
  char* storage = nullptr;
  int32_t capacity = 0;
  int32_t size = 0;
  // Linear-probing index row -> slot; kEmpty marks free buckets. A bucket holds both, so that
  // a lookup costs one cache line.
  static constexpr int64_t kEmpty = -1;
  struct Bucket {
    int64_t key = kEmpty;
    int32_t slot = 0;
  };
  std::vector<Bucket> buckets;
  uint64_t mask = 0;
  std::vector<int64_t> row_of_slot;
  std::unique_ptr<EvictionPolicy> policy;  // null in a static cache

  Shard(char* storage_begin, int32_t slot_count, CachePolicy kind)
      : storage(storage_begin), capacity(slot_count) {
    uint64_t buckets = 2;
    while (buckets < 2 * static_cast<uint64_t>(slot_count)) buckets *= 2;
    this->buckets.assign(buckets, Bucket{});
    mask = buckets - 1;
    row_of_slot.assign(slot_count, kEmpty);
    if (kind != CachePolicy::kStatic) policy = make_eviction_policy(kind, slot_count);
  }

  uint64_t home(int64_t row) const { return (mix(row) >> 8) & mask; }

  int32_t find(int64_t row) const {
    for (uint64_t i = home(row);; i = (i + 1) & mask) {
      if (buckets[i].key == row) return buckets[i].slot;
      if (buckets[i].key == kEmpty) return -1;
    }
  }
  // Starts loading the bucket that find(row) reads first.
  void prefetch(int64_t row) const { __builtin_prefetch(&buckets[home(row)]); }

  void put(int64_t row, int32_t slot) {
    uint64_t i = home(row);
    while (buckets[i].key != kEmpty) i = (i + 1) & mask;
    buckets[i] = {row, slot};
  }

  // Backward-shift deletion keeps probe sequences intact without tombstones.
  void erase(int64_t row) {
    uint64_t i = home(row);
    while (buckets[i].key != row) i = (i + 1) & mask;
    buckets[i].key = kEmpty;
    for (uint64_t j = (i + 1) & mask; buckets[j].key != kEmpty; j = (j + 1) & mask) {
      const uint64_t ideal = home(buckets[j].key);
      const bool stays = i <= j ? (i < ideal && ideal <= j) : (i < ideal || ideal <= j);
      if (stays) continue;
      buckets[i] = buckets[j];
      buckets[j].key = kEmpty;
      i = j;
    }
  }

  // Puts `row` in a free slot, or in the policy's victim's; returns the slot.
  int32_t admit(int64_t row) {
    int32_t slot = size;
    if (size < capacity) {
      ++size;
    } else {
      slot = policy->evict();
      erase(row_of_slot[slot]);
    }
    row_of_slot[slot] = row;
    put(row, slot);
    if (policy) policy->inserted(slot, row);
    return slot;
  }
};

int64_t parse_byte_size(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    GL_THROW("'{}' is not a size (expected bytes or a number with K, M, G or T, e.g. 512M)", text);
  }
  std::string unit = text.substr(used);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  const std::string units = "KMGT";
  double factor = 1;
  if (!unit.empty()) {
    const auto position = units.find(unit);
    GL_CHECK(unit.size() == 1 && position != std::string::npos,
             "'{}' is not a size (expected bytes or a number with K, M, G or T, e.g. 512M)", text);
    for (std::size_t i = 0; i <= position; ++i) factor *= 1024;
  }
  GL_CHECK(value >= 0, "size '{}' must not be negative", text);
  return static_cast<int64_t>(value * factor);
}

at::Tensor rows_by_reference_count(const at::Tensor& indices, int64_t num_rows) {
  const at::Tensor counts = graph::count_node_ids(indices, num_rows);
  return std::get<1>(at::sort(counts, std::optional<bool>(true), /*dim=*/0, /*descending=*/true));
}

CachedFeatureSource::CachedFeatureSource(const FeatureSource& backing, std::string name,
                                         CacheOptions options)
    : backing_(backing),
      name_(std::move(name)),
      options_(std::move(options)),
      info_(backing.info(name_)) {
  row_bytes_ = static_cast<int64_t>(c10::elementSize(info_.dtype));
  for (int64_t size : info_.row_shape) row_bytes_ *= size;
  GL_CHECK(row_bytes_ > 0, "cannot cache '{}': its rows are empty", name_);
  GL_CHECK(options_.policy != CachePolicy::kNone,
           "a feature cache needs a policy (degree, sieve, s3-fifo, lru or clock)");
  GL_CHECK(options_.capacity_bytes >= 0, "cache size must not be negative");
  const int64_t cacheable =
      info_.num_rows -
      std::clamp<int64_t>(options_.bypass_end - options_.bypass_begin, 0, info_.num_rows);
  capacity_rows_ = std::min(options_.capacity_bytes / row_bytes_, cacheable);
  if (capacity_rows_ == 0) return;
  // A static cache is read-only after this constructor: one shard, no locks on lookups.
  const int64_t shards = options_.policy == CachePolicy::kStatic ? 1
                         : options_.shards > 0 ? std::min(options_.shards, capacity_rows_)
                                               : std::min(kMaxShards, capacity_rows_);
  // Storage: at least one row per shard, whole rows, one allocation.
  storage_ = at::empty({capacity_rows_ * row_bytes_}, at::kByte);
  char* base = static_cast<char*>(storage_.data_ptr());
  int64_t first = 0;
  for (int64_t s = 0; s < shards; ++s) {
    const int64_t count = capacity_rows_ / shards + (s < capacity_rows_ % shards ? 1 : 0);
    shards_.push_back(std::make_unique<Shard>(base + first * row_bytes_,
                                              static_cast<int32_t>(count), options_.policy));
    first += count;
  }
  if (options_.policy == CachePolicy::kStatic) {
    GL_CHECK(options_.static_rows.defined(), "a static cache of '{}' needs the rows to keep",
             name_);
    const at::Tensor candidates = options_.static_rows.to(at::kLong).contiguous();
    const at::Tensor outside =
        (candidates < options_.bypass_begin) | (candidates >= options_.bypass_end);
    const at::Tensor chosen = candidates.masked_select(outside).slice(0, 0, capacity_rows_);
    // In slices of 16 MiB: gathering every chosen row at once would hold them twice (and a
    // disk source's aligned read buffers besides), under a memory cap the cache was sized for.
    const int64_t slice_rows = std::max<int64_t>(1, (int64_t{16} << 20) / row_bytes_);
    std::vector<int32_t> slots(
        dense_index_fits(info_.num_rows, options_.capacity_bytes) ? info_.num_rows : 0, -1);
    for (int64_t begin = 0; begin < chosen.numel(); begin += slice_rows) {
      const at::Tensor ids = chosen.slice(0, begin, begin + slice_rows);
      const at::Tensor rows = backing_.gather(name_, ids);
      const auto* source = static_cast<const char*>(rows.data_ptr());
      const int64_t* id = ids.data_ptr<int64_t>();
      for (int64_t i = 0; i < ids.numel(); ++i) {
        const int32_t slot = insert(id[i], source + i * row_bytes_);
        if (!slots.empty()) slots[static_cast<std::size_t>(id[i])] = slot;
      }
    }
    slot_of_row_ = std::move(slots);  // lookups read it from here on
  }
}

CachedFeatureSource::~CachedFeatureSource() = default;

CachedFeatureSource::Shard& CachedFeatureSource::shard_of(int64_t row) const {
  return *shards_[mix(row) % shards_.size()];
}

bool CachedFeatureSource::lookup(int64_t row, char* target) const {
  Shard& shard = shard_of(row);
  const bool locked = options_.policy != CachePolicy::kStatic;
  std::unique_lock<std::mutex> lock(shard.mutex, std::defer_lock);
  if (locked) lock.lock();
  const int32_t slot = shard.find(row);
  if (slot < 0) return false;
  if (shard.policy) shard.policy->hit(slot);
  std::memcpy(target, shard.storage + slot * row_bytes_, row_bytes_);
  return true;
}

int32_t CachedFeatureSource::insert(int64_t row, const char* source) const {
  Shard& shard = shard_of(row);
  std::lock_guard<std::mutex> lock(shard.mutex);
  const int32_t cached = shard.find(row);
  if (cached >= 0) return cached;  // another worker cached it meanwhile
  const int32_t slot = shard.admit(row);
  std::memcpy(shard.storage + slot * row_bytes_, source, row_bytes_);
  return slot;
}

void CachedFeatureSource::copy_static_hits(const int64_t* id, int64_t n, at::Tensor& out,
                                           std::vector<uint8_t>& state) const {
  // Slots are the one shard's: a static cache has no other.
  GL_CHECK(shards_.size() == 1, "a static cache keeps one shard, not {}", shards_.size());
  std::vector<int64_t> slots(static_cast<std::size_t>(n));
  const auto rows = static_cast<uint64_t>(slot_of_row_.size());
  int64_t hits = 0;
#pragma omp parallel for schedule(static) reduction(+ : hits)
  for (int64_t i = 0; i < n; ++i) {
    if (id[i] >= options_.bypass_begin && id[i] < options_.bypass_end) {
      state[i] = 2;
      slots[i] = -1;
      continue;
    }
    // Ids outside the table miss: the backing source names them in its error.
    slots[i] = static_cast<uint64_t>(id[i]) < rows ? slot_of_row_[id[i]] : -1;
    state[i] = slots[i] >= 0 ? 1 : 0;
    hits += state[i];
  }
  if (hits == 0) return;
  const at::Tensor table = storage_.view({capacity_rows_, row_bytes_});
  if (hits == n) {  // the common case of a cache that holds what the batches read
    gather_rows(table, at::from_blob(slots.data(), {n}, at::kLong), out);
    return;
  }
  std::vector<int64_t> positions;
  positions.reserve(static_cast<std::size_t>(hits));
  for (int64_t i = 0; i < n; ++i) {
    if (state[i] != 1) continue;
    slots[positions.size()] = slots[i];
    positions.push_back(i);
  }
  gather_rows(table, at::from_blob(slots.data(), {hits}, at::kLong), out,
              at::from_blob(positions.data(), {hits}, at::kLong));
}

void CachedFeatureSource::gather(const std::string& name, const at::Tensor& ids,
                                 at::Tensor& out) const {
  if (name != name_ || shards_.empty()) {
    if (name == name_) misses_ += ids.numel();
    backing_.gather(name, ids, out);
    return;
  }
  GL_CHECK(ids.scalar_type() == at::kLong && ids.dim() == 1,
           "gather '{}': ids must be a 1-D int64 tensor", name);
  GL_CHECK(out.defined() && out.is_contiguous() && out.scalar_type() == info_.dtype &&
               out.numel() * static_cast<int64_t>(out.element_size()) == ids.numel() * row_bytes_,
           "gather '{}': output must be a contiguous tensor of {} rows of {} bytes", name,
           ids.numel(), row_bytes_);
  const at::Tensor all = ids.contiguous();
  const int64_t n = all.numel();
  const int64_t* id = all.data_ptr<int64_t>();
  char* target = static_cast<char*>(out.data_ptr());
  // 0 = miss, 1 = hit, 2 = bypassed.
  std::vector<uint8_t> state(n);
  if (!slot_of_row_.empty()) {
    copy_static_hits(id, n, out, state);
  } else {
    // Buckets are random reads: each is requested this many rows ahead of its lookup.
    constexpr int64_t kAhead = 16;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      if (i + kAhead < n) shard_of(id[i + kAhead]).prefetch(id[i + kAhead]);
      if (id[i] >= options_.bypass_begin && id[i] < options_.bypass_end) {
        state[i] = 2;
      } else {
        state[i] = lookup(id[i], target + i * row_bytes_) ? 1 : 0;
      }
    }
  }
  std::vector<int64_t> positions;
  int64_t hits = 0;
  int64_t bypassed = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (state[i] == 1) {
      ++hits;
      continue;
    }
    bypassed += state[i] == 2;
    positions.push_back(i);
  }
  hits_ += hits;
  bypassed_ += bypassed;
  misses_ += static_cast<int64_t>(positions.size()) - bypassed;
  if (positions.empty()) return;
  const at::Tensor where =
      at::from_blob(positions.data(), {static_cast<int64_t>(positions.size())}, at::kLong);
  const at::Tensor missing = all.index_select(0, where);
  const at::Tensor rows = backing_.gather(name, missing);
  const auto* source = static_cast<const char*>(rows.data_ptr());
  for (std::size_t k = 0; k < positions.size(); ++k) {
    std::memcpy(target + positions[k] * row_bytes_, source + k * row_bytes_, row_bytes_);
  }
  if (options_.policy == CachePolicy::kStatic) return;
  for (std::size_t k = 0; k < positions.size(); ++k) {
    if (state[positions[k]] == 0) insert(id[positions[k]], source + k * row_bytes_);
  }
}

int64_t CachedFeatureSource::cached_rows() const {
  int64_t total = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    total += shard->size;
  }
  return total;
}

CacheStats CachedFeatureSource::stats(bool reset) const {
  if (reset) return {hits_.exchange(0), misses_.exchange(0), bypassed_.exchange(0)};
  return {hits_.load(), misses_.load(), bypassed_.load()};
}

}  // namespace graphloom::features
