// dataset_rows: a dataset's tables as one FeatureSource, without copying them.
#include "graphloom/features/dataset_rows.h"

namespace graphloom::features {

TensorFeatureSource dataset_rows(const io::Dataset& dataset) {
  TensorFeatureSource rows;
  for (const auto& [name, table] : dataset.node_features) {
    const auto scale = dataset.node_feature_scales.find(name);
    rows.add(name, table,
             scale == dataset.node_feature_scales.end() ? at::Tensor() : scale->second);
  }
  if (dataset.labels.defined()) rows.add("label", dataset.labels);
  return rows;
}

}  // namespace graphloom::features
