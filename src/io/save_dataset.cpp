// Writing a dataset directory (DESIGN.md section 4): the graph in CSC form, features, labels,
// splits and metadata.json, staged and renamed into place only when complete.
#include <ATen/ATen.h>

#include <map>
#include <nlohmann/json.hpp>

#include "graphloom/base/atomic_output.h"
#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"
#include "graphloom/io/dataset.h"

namespace graphloom::io {

namespace fs = std::filesystem;
using json = nlohmann::json;

void save_dataset(const Dataset& dataset, const fs::path& dir, bool overwrite) {
  validate_dataset(dataset);
  AtomicDirectory out(dir, overwrite);
  const fs::path& staging = out.staging();
  const graph::CscGraph& graph = dataset.graph;

  json graph_meta = {{"indptr", "indptr.npy"}, {"indices", "indices.npy"}};
  save_npy(staging / "indptr.npy", graph.indptr);
  save_npy(staging / "indices.npy", graph.indices);
  if (graph.has_edge_ids()) {
    save_npy(staging / "edge_ids.npy", graph.edge_ids);
    graph_meta["edge_ids"] = "edge_ids.npy";
  }
  if (graph.has_weights()) {
    save_npy(staging / "weights.npy", graph.weights);
    graph_meta["weights"] = "weights.npy";
  }
  if (graph.type_per_edge.defined()) {
    save_npy(staging / "type_per_edge.npy", graph.type_per_edge.contiguous());
    graph_meta["type_per_edge"] = "type_per_edge.npy";
  }
  if (graph.edge_time.defined()) {
    save_npy(staging / "edge_timestamp.npy", graph.edge_time.contiguous());
    graph_meta["edge_timestamp"] = "edge_timestamp.npy";
  }
  json meta = {{"format", kDatasetFormat},     {"version", 1},
               {"name", dataset.name},         {"num_nodes", dataset.num_nodes()},
               {"directed", dataset.directed}, {"graph", graph_meta}};
  if (!dataset.schema.empty()) {
    const at::Tensor offsets = dataset.graph.node_type_offset.contiguous();
    json node_types = json::array();
    for (int64_t t = 0; t < dataset.schema.num_node_types(); ++t) {
      node_types.push_back(
          {{"name", dataset.schema.node_types[static_cast<std::size_t>(t)]},
           {"count", offsets[t + 1].item<int64_t>() - offsets[t].item<int64_t>()}});
    }
    json edge_types = json::array();
    for (const graph::EdgeType& type : dataset.schema.edge_types) {
      edge_types.push_back({type.src, type.relation, type.dst});
    }
    meta["node_types"] = node_types;
    meta["edge_types"] = edge_types;
  }
  if (!dataset.node_features.empty()) {
    json features = json::object();
    for (const auto& [name, feature] : dataset.node_features) {
      const std::string file = "feat_" + name + ".npy";
      save_npy(staging / file, feature);
      features[name] = file;
      if (dataset.node_feature_scales.count(name)) {
        const std::string scale_file = "feat_" + name + "_row_scale.npy";
        save_npy(staging / scale_file, dataset.node_feature_scales.at(name));
        features[name] = {{"file", file}, {"row_scale", scale_file}};
      }
    }
    meta["node_features"] = features;
  }
  if (dataset.node_timestamp.defined()) {
    save_npy(staging / "node_timestamp.npy", dataset.node_timestamp.contiguous());
    meta["node_timestamp"] = "node_timestamp.npy";
  }
  if (dataset.labels.defined()) {
    save_npy(staging / "labels.npy", dataset.labels);
    meta["labels"] = "labels.npy";
    meta["num_classes"] = dataset.num_classes;
  }
  // Each named array as PREFIX<name>SUFFIX.npy, listed under `key` when there are any.
  const auto save_arrays = [&](const std::map<std::string, at::Tensor>& arrays, const char* key,
                               const std::string& prefix, const std::string& suffix) {
    if (arrays.empty()) return;
    json files = json::object();
    for (const auto& [name, array] : arrays) {
      const std::string file = prefix + name + suffix + ".npy";
      save_npy(staging / file, array.contiguous());
      files[name] = file;
    }
    meta[key] = files;
  };
  save_arrays(dataset.splits, "splits", "", "_idx");
  save_arrays(dataset.edge_splits, "edge_splits", "edges_", "");
  save_arrays(dataset.edge_split_times, "edge_split_times", "edges_", "_time");
  const std::string text = meta.dump(1) + "\n";
  AtomicFile metadata(staging / "metadata.json");
  metadata.write(text.data(), text.size());
  metadata.commit();
  out.commit();
}

}  // namespace graphloom::io
