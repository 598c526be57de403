// Dataset inputs shared by node classification and link prediction.
#include "graphloom/train/dataset_inputs.h"

#include <ATen/ATen.h>

#include <spdlog/spdlog.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "graphloom/base/error.h"
#include "graphloom/features/row_codec.h"
#include "graphloom/graph/temporal.h"
#include "graphloom/graph/transforms.h"
#include "graphloom/train/link_ranking.h"

namespace graphloom::train {

bool adds_self_loops(nn::ModelKind model_kind, SelfLoops self_loops) {
  return self_loops == SelfLoops::kAdd ||
         (self_loops == SelfLoops::kAuto &&
          (model_kind == nn::ModelKind::kGcn || model_kind == nn::ModelKind::kGat));
}

graph::CscGraph graph_for_model(const graph::CscGraph& graph, nn::ModelKind model_kind,
                                SelfLoops self_loops) {
  return adds_self_loops(model_kind, self_loops)
             ? graph::add_self_loops(graph::remove_self_loops(graph))
             : graph;
}

features::TensorFeatureSource dataset_rows(const io::Dataset& dataset,
                                           FeatureNormalization normalize_features) {
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
    if (normalize_features == FeatureNormalization::kRow)
      features.row_scale = features::row_normalizing_scale(features);
    rows.add("feat", features.values, features.row_scale);
  }
  if (dataset.labels.defined()) rows.add("label", dataset.labels);
  return rows;
}

namespace {

// The graph the sampler reads: the model's, sorted by time for temporal sampling.
graph::CscGraph sampled_graph(const io::Dataset& dataset, const TrainOptions& options,
                              TaskKind task) {
  graph::CscGraph graph = graph_for_model(dataset.graph, options.model.kind, options.self_loops);
  if (!options.temporal) return graph;
  // Node seeds are sampled at their node_timestamp; link prediction's pairs at their own times,
  // over a graph whose edges (or source nodes) have times.
  if (task == TaskKind::kNodeClassification && !dataset.node_timestamp.defined()) {
    throw OptionError("temporal", fmt::format("needs each seed's time: dataset '{}' has no "
                                              "node_timestamp",
                                              dataset.name));
  }
  // A pair's blocks must not reach its own edge: with node times alone an edge is usable from
  // its source's time, which may come long before the pair's.
  if (task == TaskKind::kLinkPrediction && !graph.edge_time.defined()) {
    throw OptionError("temporal", fmt::format("samples each pair before its edge's time: dataset "
                                              "'{}' has no edge_timestamp",
                                              dataset.name));
  }
  return graph::sorted_by_time(graph, dataset.node_timestamp, graph.edge_time);
}

}  // namespace

DatasetInputs::DatasetInputs(const io::Dataset& dataset, const TrainOptions& options, TaskKind task)
    : graph_(sampled_graph(dataset, options, task)),
      source_(graph_),
      rows_(dataset_rows(dataset, options.normalize_features)) {
  TrainingInputs& in = inputs_;
  in.name = dataset.name;
  in.graph = &source_;
  in.rows = &rows_;
  in.num_nodes = dataset.num_nodes();
  in.num_relations = dataset.schema.num_edge_types();
  in.typed = !dataset.schema.empty();
  in.in_degrees = graph_.in_degrees();
  in.out_degrees = graph_.out_degrees();
  const auto split = [&](const char* name) {
    const auto it = dataset.splits.find(name);
    return it != dataset.splits.end() ? it->second : at::Tensor();
  };
  in.train_nodes = split("train");
  in.valid_nodes = split("valid");
  in.test_nodes = split("test");
  in.num_classes = dataset.labels.defined() ? dataset.num_classes : 0;
  if (options.temporal) {
    in.node_times = [times = dataset.node_timestamp](const at::Tensor& ids) {
      return times.index_select(0, ids);
    };
  }
  in.edge_splits = dataset.edge_splits;
  in.edge_split_times = dataset.edge_split_times;
  if (task == TaskKind::kLinkPrediction) in.target = link_target(dataset);
  in.whole_graph = &dataset.graph;  // LightGCN and common neighbours: the plain graph
  if (options.feature_storage == FeatureStorage::kDisk) read_features_from_disk(dataset, options);
}

void DatasetInputs::read_features_from_disk(const io::Dataset& dataset,
                                            const TrainOptions& options) {
  if (options.normalize_features != FeatureNormalization::kNone) {
    throw OptionError("feature_storage",
                      "disk reads float32 rows as stored: not with --normalize-features");
  }
  disk_rows_ =
      std::make_unique<features::DiskDatasetRows>(dataset, options.disk_cache, graph_.indices);
  inputs_.rows = disk_rows_.get();
  inputs_.epoch_counters = [rows = disk_rows_.get()] { return rows->take_counters(); };
  spdlog::info("{}", disk_rows_->description());
}

}  // namespace graphloom::train
