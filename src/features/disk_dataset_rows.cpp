// DiskDatasetRows (disk_dataset_rows.h): "feat" from its file, the rest from memory.
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

CacheOptions with_static_rows(CacheOptions cache, const at::Tensor& graph_indices,
                              int64_t num_nodes) {
  if (cache.policy == CachePolicy::kStatic) {
    cache.static_rows = rows_by_reference_count(graph_indices, num_nodes);
  }
  return cache;
}

}  // namespace

DiskDatasetRows::DiskDatasetRows(const io::Dataset& dataset, CacheOptions cache,
                                 const at::Tensor& graph_indices)
    : memory_(dataset_rows(dataset)),
      feat_(kFeat, feature_file(dataset),
            with_static_rows(std::move(cache), graph_indices, dataset.num_nodes())) {}

void DiskDatasetRows::gather(const std::string& name, const at::Tensor& ids,
                             at::Tensor& out) const {
  if (name == kFeat) {
    feat_.gather(name, ids, out);
  } else {
    memory_.gather(name, ids, out);
  }
}

EncodedRows DiskDatasetRows::encoded_table(const std::string& name) const {
  return name == kFeat ? EncodedRows{} : memory_.encoded_table(name);
}

}  // namespace graphloom::features
