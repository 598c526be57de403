// Dataset inputs shared by node classification and link prediction.
#include "graphloom/train/dataset_inputs.h"

#include <ATen/ATen.h>

#include "graphloom/base/error.h"
#include "graphloom/features/row_codec.h"
#include "graphloom/graph/transforms.h"

namespace graphloom::train {

graph::CscGraph graph_for_model(const graph::CscGraph& graph, const std::string& model_kind,
                                const std::string& self_loops) {
  GL_CHECK(self_loops == "auto" || self_loops == "add" || self_loops == "keep",
           "--self-loops must be auto, add or keep, got '{}'", self_loops);
  const bool loops =
      self_loops == "add" || (self_loops == "auto" && (model_kind == "gcn" || model_kind == "gat"));
  return loops ? graph::add_self_loops(graph::remove_self_loops(graph)) : graph;
}

features::TensorFeatureSource dataset_rows(const io::Dataset& dataset,
                                           const std::string& normalize_features) {
  GL_CHECK(normalize_features == "none" || normalize_features == "row",
           "--normalize-features must be 'none' or 'row', got '{}'", normalize_features);
  features::TensorFeatureSource rows;
  if (dataset.node_features.count("feat")) {
    // Features stay as stored (memory-mapped, maybe encoded) and are decoded per batch; row
    // normalization is a per-row scale folded into the decoding, not a normalized copy.
    features::EncodedRows features{dataset.node_features.at("feat"), {}};
    if (features.values.scalar_type() == at::kDouble) {
      features.values = features.values.to(at::kFloat);
    }
    if (dataset.node_feature_scales.count("feat")) {
      features.row_scale = dataset.node_feature_scales.at("feat");
    }
    if (normalize_features == "row") features.row_scale = features::row_normalizing_scale(features);
    rows.add("feat", features.values, features.row_scale);
  }
  if (dataset.labels.defined()) rows.add("label", dataset.labels);
  return rows;
}

}  // namespace graphloom::train
