// DiskDatasetRows: a dataset's rows with "feat" read from its `.npy` file on each gather
// (DiskFeatureSource: io_uring, O_DIRECT), through a cache of hot rows when asked; every other
// table (labels, other features) from memory or its mapping, as dataset_rows gives them. The
// one construction the CLI trainer and Python share for `feature_storage` disk.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/disk_feature_source.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/io/dataset.h"

namespace graphloom::features {

class DiskDatasetRows final : public FeatureSource {
 public:
  // `cache.policy` kNone: no cache; kStatic: the rows most referred to by `graph_indices` (the
  // sampled graph's CSC sources) first. Throws OptionError("feature_storage") when "feat" has
  // no file or is not float32 as stored (disk reads rows as they are on disk), and
  // OptionError("cache_size") for a cache without a size.
  DiskDatasetRows(const io::Dataset& dataset, CacheOptions cache, const at::Tensor& graph_indices);
  ~DiskDatasetRows() override;

  bool has(const std::string& name) const override { return rows().has(name); }
  FeatureInfo info(const std::string& name) const override { return rows().info(name); }
  using FeatureSource::gather;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override;
  EncodedRows encoded_table(const std::string& name) const override;

  // Since the last call: disk_bytes, and with a cache cache_hits and cache_misses.
  std::map<std::string, double> take_counters();
  // Where "feat" comes from, for a log line: the file, the reader, the cache.
  const std::string& description() const { return description_; }

 private:
  const FeatureSource& rows() const { return memory_; }

  TensorFeatureSource memory_;  // every table but "feat"'s rows
  std::unique_ptr<DiskFeatureSource> disk_;
  std::unique_ptr<CachedFeatureSource> cache_;  // in front of disk_, or null
  const FeatureSource* feat_ = nullptr;         // cache_ or disk_
  int64_t bytes_before_ = 0;
  std::string description_;
};

}  // namespace graphloom::features
