// A hot-row cache in front of a slower FeatureSource (a remote DistGraph, a memory-mapped file),
// as GraphBolt's feature cache and PaGraph's degree cache: rows of one feature are kept in a
// byte budget, either a static set filled at start (the most-referenced nodes first) or a
// dynamic cache evicting by SIEVE, S3-FIFO, LRU or CLOCK (eviction_policy.h in src/features).
// Misses of a gather are fetched from the backing source in one request.
// Thread-safe: the cache is split into shards, each with its own lock, so concurrent loader
// workers do not serialize on one lock; the static cache takes no lock at all.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graphloom/base/enum_names.h"
#include "graphloom/features/feature_source.h"

namespace graphloom::features {

// kNone (no cache) is for the jobs that choose one; a CachedFeatureSource needs a policy.
// kStatic keeps the rows it was given; the others admit every missed row and evict by their
// rule (SIEVE is GraphBolt's default and did best in its published papers100M figures).
enum class CachePolicy { kNone, kStatic, kSieve, kS3Fifo, kLru, kClock };

struct CacheOptions {
  CachePolicy policy = CachePolicy::kSieve;
  int64_t capacity_bytes = 0;
  // kStatic: the rows to keep, best first (filled until the budget is spent).
  at::Tensor static_rows;
  // Rows in [bypass_begin, bypass_end) go straight to the backing source and are never cached
  // (a trainer's own partition, already read in place from shared memory).
  int64_t bypass_begin = 0;
  int64_t bypass_end = 0;
  // Dynamic policies: lock shards (0 = up to 64); each evicts among its own share of rows.
  int64_t shards = 0;
};

struct CacheStats {
  int64_t hits = 0;
  int64_t misses = 0;    // rows fetched from the backing source that the cache could hold
  int64_t bypassed = 0;  // rows of the bypass range
  double hit_rate() const { return hits + misses > 0 ? double(hits) / double(hits + misses) : 0; }
};

// Parses a byte size: "512M", "2G", "1.5GiB", "1000000" (bytes); throws on anything else.
int64_t parse_byte_size(const std::string& text);
// Rows ordered by how often `indices` (CSC sources) refer to them, most first: the nodes a
// sampler touches most, for the static cache.
at::Tensor rows_by_reference_count(const at::Tensor& indices, int64_t num_rows);

class CachedFeatureSource : public FeatureSource {
 public:
  // Caches `name` of `backing` (which must outlive this); other names pass through.
  CachedFeatureSource(const FeatureSource& backing, std::string name, CacheOptions options);
  ~CachedFeatureSource() override;

  bool has(const std::string& name) const override { return backing_.has(name); }
  FeatureInfo info(const std::string& name) const override { return backing_.info(name); }
  using FeatureSource::gather;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override;

  int64_t capacity_rows() const { return capacity_rows_; }
  int64_t cached_rows() const;
  // Counters since construction or the last call with reset = true.
  CacheStats stats(bool reset = false) const;

 private:
  struct Shard;
  Shard& shard_of(int64_t row) const;
  // Copies the cached row into `target`; false when `row` is not cached.
  bool lookup(int64_t row, char* target) const;
  // Static caches with a dense index: copies the cached rows of `id` into their rows of `out`
  // by the in-memory table's gather, marking them 1 in `state` (the bypassed ones 2).
  void copy_static_hits(const int64_t* id, int64_t n, at::Tensor& out,
                        std::vector<uint8_t>& state) const;
  // Caches `row` (unless it is already); returns its slot in its shard.
  int32_t insert(int64_t row, const char* source) const;

  const FeatureSource& backing_;
  std::string name_;
  CacheOptions options_;
  FeatureInfo info_;
  int64_t row_bytes_ = 0;
  int64_t capacity_rows_ = 0;
  at::Tensor storage_;  // capacity_rows x row bytes
  std::vector<std::unique_ptr<Shard>> shards_;
  // Static caches: the slot of every row of the table (-1: not cached), so that a lookup reads
  // one int in a small array instead of a hash bucket (a random DRAM line); empty (the hash
  // index then) when the array would be large beside the cache (dense_index_fits).
  std::vector<int32_t> slot_of_row_;
  mutable std::atomic<int64_t> hits_{0}, misses_{0}, bypassed_{0};
};

}  // namespace graphloom::features

namespace graphloom {
// "degree": the static cache is filled with the rows the local edges refer to most.
template <>
struct EnumNames<features::CachePolicy> {
  static constexpr std::array<std::pair<std::string_view, features::CachePolicy>, 6> kNames{
      {{"none", features::CachePolicy::kNone},
       {"degree", features::CachePolicy::kStatic},
       {"sieve", features::CachePolicy::kSieve},
       {"s3-fifo", features::CachePolicy::kS3Fifo},
       {"lru", features::CachePolicy::kLru},
       {"clock", features::CachePolicy::kClock}}};
};
}  // namespace graphloom
