// DiskDatasetRows (disk_dataset_rows.h): "feat" from its file, through the cache, the rest from
// memory.
#include "graphloom/features/disk_dataset_rows.h"

#include <fmt/format.h>

#include "graphloom/base/error.h"
#include "graphloom/features/dataset_rows.h"

namespace graphloom::features {
namespace {

constexpr const char* kFeat = "feat";

const std::filesystem::path& feature_file(const io::Dataset& dataset) {
  const auto file = dataset.node_feature_files.find(kFeat);
  if (file == dataset.node_feature_files.end()) {
    throw OptionError(
        "feature_storage",
        fmt::format("disk reads 'feat' from its file, and dataset '{}' has none", dataset.name));
  }
  if (dataset.node_features.at(kFeat).scalar_type() != at::kFloat ||
      dataset.node_feature_scales.count(kFeat) > 0) {
    throw OptionError("feature_storage",
                      "disk reads float32 rows as stored: not compressed features (re-encode "
                      "with `convert --feature-dtype float32`)");
  }
  return file->second;
}

}  // namespace

DiskDatasetRows::DiskDatasetRows(const io::Dataset& dataset, CacheOptions cache,
                                 const at::Tensor& graph_indices)
    : memory_(dataset_rows(dataset)) {
  const std::filesystem::path& file = feature_file(dataset);
  disk_ = std::make_unique<DiskFeatureSource>(
      std::map<std::string, std::filesystem::path>{{kFeat, file}});
  feat_ = disk_.get();
  if (cache.policy != CachePolicy::kNone) {
    if (cache.capacity_bytes <= 0) {
      throw OptionError("cache_size",
                        fmt::format("{} needs a size (e.g. 256M)", name_of(cache.policy)));
    }
    if (cache.policy == CachePolicy::kStatic) {
      cache.static_rows = rows_by_reference_count(graph_indices, dataset.num_nodes());
    }
    cache_ = std::make_unique<CachedFeatureSource>(*disk_, kFeat, cache);
    feat_ = cache_.get();
  }
  description_ = fmt::format(
      "'feat' read from {} on each gather ({}{})", file.string(), disk_->reader(),
      cache_ ? fmt::format(", {} cache of {} rows", name_of(cache.policy), cache_->capacity_rows())
             : "");
}

DiskDatasetRows::~DiskDatasetRows() = default;

void DiskDatasetRows::gather(const std::string& name, const at::Tensor& ids,
                             at::Tensor& out) const {
  (name == kFeat ? *feat_ : rows()).gather(name, ids, out);
}

EncodedRows DiskDatasetRows::encoded_table(const std::string& name) const {
  return name == kFeat ? EncodedRows{} : memory_.encoded_table(name);
}

std::map<std::string, double> DiskDatasetRows::take_counters() {
  const int64_t read = disk_->bytes_read();
  std::map<std::string, double> counters{{"disk_bytes", static_cast<double>(read - bytes_before_)}};
  bytes_before_ = read;
  if (cache_) {
    const CacheStats stats = cache_->stats(/*reset=*/true);
    counters["cache_hits"] = static_cast<double>(stats.hits);
    counters["cache_misses"] = static_cast<double>(stats.misses);
  }
  return counters;
}

}  // namespace graphloom::features
