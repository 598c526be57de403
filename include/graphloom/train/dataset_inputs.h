// What a training task reads from an in-memory dataset, prepared the same way for every task:
// the graph with the self-loops its model expects, and the node rows as a FeatureSource.
// (The partitioned graph's adapter is train/partitioned_training.h.)
#pragma once

#include <memory>
#include <string>

#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/disk_dataset_rows.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/graph/csc_graph.h"
#include "graphloom/io/dataset.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/train/train_options.h"
#include "graphloom/train/training_inputs.h"

namespace graphloom::train {

// True when `self_loops` gives model `model_kind` one self-loop per node: kAdd, or kAuto for
// gcn and gat (as their papers).
bool adds_self_loops(nn::ModelKind model_kind, SelfLoops self_loops);

// `graph` with one self-loop per node when adds_self_loops(); else as it is.
graph::CscGraph graph_for_model(const graph::CscGraph& graph, nn::ModelKind model_kind,
                                SelfLoops self_loops);

// "feat" (as stored, decoded per gather; kRow normalization as a per-row scale) and "label"
// when the dataset has them.
features::TensorFeatureSource dataset_rows(const io::Dataset& dataset,
                                           FeatureNormalization normalize_features);

// A dataset as the TrainingInputs of a `task`: its splits, its graph with the self-loops
// options.model asks for, its rows. `dataset` must outlive it.
class DatasetInputs {
 public:
  DatasetInputs(const io::Dataset& dataset, const TrainOptions& options, TaskKind task);
  DatasetInputs(const DatasetInputs&) = delete;
  DatasetInputs& operator=(const DatasetInputs&) = delete;

  const TrainingInputs& inputs() const { return inputs_; }

 private:
  // feature_storage disk: "feat" read from its file (through a cache when asked), the other
  // rows from rows_.
  void read_features_from_disk(const io::Dataset& dataset, const TrainOptions& options);

  graph::CscGraph graph_;
  sampling::LocalNeighborSource source_;
  features::TensorFeatureSource rows_;
  std::unique_ptr<features::DiskDatasetRows> disk_rows_;
  TrainingInputs inputs_;
};

}  // namespace graphloom::train
