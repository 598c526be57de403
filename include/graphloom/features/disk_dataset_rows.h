// DiskDatasetRows: a dataset's rows with "feat" read from its `.npy` file on each gather
// (DiskRows), every other table (labels, other features) from memory or its mapping, as
// dataset_rows gives them. The one construction the CLI trainer and Python share for
// `feature_storage` disk.
#pragma once

#include <map>
#include <string>

#include "graphloom/features/disk_rows.h"
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

  bool has(const std::string& name) const override { return memory_.has(name); }
  FeatureInfo info(const std::string& name) const override { return memory_.info(name); }
  using FeatureSource::gather;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override;
  EncodedRows encoded_table(const std::string& name) const override;

  // Since the last call: disk_bytes, and with a cache cache_hits and cache_misses.
  std::map<std::string, double> take_counters() { return feat_.take_counters(); }
  const std::string& description() const { return feat_.description(); }

 private:
  TensorFeatureSource memory_;  // every table but "feat"'s rows
  DiskRows feat_;
};

}  // namespace graphloom::features
