// DiskRows: one table read from its `.npy` file on each gather (DiskFeatureSource: io_uring,
// O_DIRECT), through a cache of hot rows when asked, with the bytes read and the cache's hits
// counted. What `feature_storage` disk is, wherever a table is served: a local dataset (the CLI
// trainer, Python) or a partition's part (graph servers).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/disk_feature_source.h"

namespace graphloom::features {

class DiskRows final : public FeatureSource {
 public:
  // `name`'s rows from `file`. `cache.policy` kNone: no cache; otherwise `cache.capacity_bytes`
  // must be positive (OptionError("cache_size")), and kStatic needs `cache.static_rows`.
  DiskRows(std::string name, const std::filesystem::path& file, CacheOptions cache);
  ~DiskRows() override;

  bool has(const std::string& name) const override { return name == name_; }
  FeatureInfo info(const std::string& name) const override { return rows_->info(name); }
  using FeatureSource::gather;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override {
    rows_->gather(name, ids, out);
  }

  // Since the last call: disk_bytes, and with a cache cache_hits and cache_misses.
  std::map<std::string, double> take_counters();
  // Where the rows come from, for a log line: the file, the reader, the cache.
  const std::string& description() const { return description_; }

 private:
  std::string name_;
  std::unique_ptr<DiskFeatureSource> disk_;
  std::unique_ptr<CachedFeatureSource> cache_;  // in front of disk_, or null
  const FeatureSource* rows_ = nullptr;         // cache_ or disk_
  int64_t bytes_before_ = 0;
  std::string description_;
};

}  // namespace graphloom::features
