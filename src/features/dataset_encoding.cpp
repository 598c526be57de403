// Re-encoding a dataset's node features for storage.
#include "graphloom/features/dataset_encoding.h"

#include <spdlog/spdlog.h>

#include "graphloom/base/dtype.h"
#include "graphloom/features/row_codec.h"

namespace graphloom::features {

void encode_dataset_features(io::Dataset& dataset, const std::string& dtype) {
  if (dtype == "keep") return;
  for (auto& [name, values] : dataset.node_features) {
    at::Tensor table = values;
    const auto scale = dataset.node_feature_scales.find(name);
    if (scale != dataset.node_feature_scales.end()) {
      table = values.to(at::kFloat) * scale->second.unsqueeze(1);
      dataset.node_feature_scales.erase(scale);
    }
    const int64_t before = static_cast<int64_t>(table.nbytes());
    features::EncodedRows encoded = features::encode_rows(table, dtype_from_name(dtype));
    values = encoded.values;
    int64_t after = static_cast<int64_t>(values.nbytes());
    if (encoded.row_scale.defined()) {
      after += static_cast<int64_t>(encoded.row_scale.nbytes());
      dataset.node_feature_scales[name] = encoded.row_scale;
    }
    spdlog::info("feature '{}' stored as {}: {:.1f} MB -> {:.1f} MB", name, dtype, before / 1e6,
                 after / 1e6);
  }
}

}  // namespace graphloom::features
