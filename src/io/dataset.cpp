// Reading and writing the dataset directory format.
#include "graphloom/io/dataset.h"
#include "graphloom/base/dtype.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "graphloom/base/atomic_output.h"
#include "graphloom/base/error.h"
#include "graphloom/base/mapped_file.h"
#include "graphloom/base/npy.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/graph/build.h"

namespace graphloom::io {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_metadata(const fs::path& file) {
  std::ifstream in(file);
  GL_CHECK(in.good(), "cannot open '{}': is '{}' a graphloom dataset directory?", file.string(),
           file.parent_path().string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    GL_THROW("'{}': invalid JSON: {}", file.string(), e.what());
  }
}

// Typed access to metadata fields with messages that name the file and the key.
class Metadata {
 public:
  Metadata(json root, fs::path dir) : root_(std::move(root)), dir_(std::move(dir)) {}

  const json& root() const { return root_; }
  fs::path file() const { return dir_ / "metadata.json"; }

  template <typename T>
  T get(const json& object, const std::string& key, const std::string& expected) const {
    GL_CHECK(object.contains(key), "'{}': missing key '{}' ({})", file().string(), key, expected);
    try {
      return object.at(key).get<T>();
    } catch (const json::exception&) {
      GL_THROW("'{}': key '{}' must be {}, got {}", file().string(), key, expected,
               object.at(key).dump());
    }
  }

  // Loads the array file named by object[key], relative to the dataset directory.
  at::Tensor array(const json& object, const std::string& key, bool memory_map) const {
    const fs::path path = dir_ / get<std::string>(object, key, "a file name");
    GL_CHECK_AS(NotFoundError, fs::exists(path), "'{}': file '{}' named by '{}' does not exist",
                file().string(), path.string(), key);
    return load_npy(path, memory_map);
  }

 private:
  json root_;
  fs::path dir_;
};

void check_unknown_keys(const json& object, const std::set<std::string>& known,
                        const std::string& where, const fs::path& file, bool strict) {
  for (const auto& [key, value] : object.items()) {
    if (known.count(key)) continue;
    GL_CHECK(!strict, "'{}': unknown key '{}' in {} (--strict)", file.string(), key, where);
    spdlog::debug("'{}': ignoring unknown key '{}' in {}", file.string(), key, where);
  }
}

// Prefixes an error from a lower layer with the file it came from.
template <typename Fn>
auto with_file_context(const fs::path& file, Fn&& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    GL_THROW("'{}': {}", file.string(), e.what());
  }
}

// An int64 array of times (node_timestamp, edge_timestamp): int32 is widened.
at::Tensor load_times(const Metadata& meta, const json& object, const std::string& key,
                      bool memory_map) {
  const fs::path file = meta.file().parent_path() / object.at(key).get<std::string>();
  const at::Tensor times = meta.array(object, key, memory_map);
  GL_CHECK(
      times.dim() == 1 && (times.scalar_type() == at::kLong || times.scalar_type() == at::kInt),
      "'{}': {} must be a 1-D int64 (or int32) array of times, got {} {}", file.string(), key,
      dtype_name(times.scalar_type()), times.sizes());
  return times.to(at::kLong);
}

// `read_tables`: read a CSC graph's indptr and indices into memory (on huge pages) instead
// of mapping them.
graph::CscGraph load_graph(const Metadata& meta, const fs::path& dir, int64_t num_nodes,
                           const LoadOptions& options, bool read_tables) {
  const json& spec = meta.root().at("graph");
  GL_CHECK(spec.is_object(), "'{}': 'graph' must be an object", meta.file().string());
  check_unknown_keys(
      spec,
      {"edges", "indptr", "indices", "edge_ids", "weights", "type_per_edge", "edge_timestamp"},
      "'graph'", meta.file(), options.strict);
  at::Tensor edge_time;
  if (spec.contains("edge_timestamp")) {
    edge_time = load_times(meta, spec, "edge_timestamp", options.memory_map);
  }
  at::Tensor weights;
  if (spec.contains("weights")) weights = meta.array(spec, "weights", options.memory_map);
  at::Tensor edge_types;
  if (spec.contains("type_per_edge")) {
    edge_types = meta.array(spec, "type_per_edge", options.memory_map);
    const auto dtype = edge_types.scalar_type();
    GL_CHECK(edge_types.dim() == 1 && (dtype == at::kChar || dtype == at::kShort ||
                                       dtype == at::kInt || dtype == at::kLong),
             "'{}': type_per_edge must be a 1-D int8/int16/int32/int64 array, got {} {}",
             (dir / spec.at("type_per_edge").get<std::string>()).string(), dtype_name(dtype),
             edge_types.sizes());
  }

  if (spec.contains("edges")) {
    const fs::path file = dir / spec.at("edges").get<std::string>();
    const at::Tensor edges = meta.array(spec, "edges", /*memory_map=*/true);
    GL_CHECK(edges.dim() == 2 && edges.size(1) == 2,
             "'{}': edges must have shape [num_edges, 2], got {}", file.string(), edges.sizes());
    GL_CHECK(edges.scalar_type() == at::kInt || edges.scalar_type() == at::kLong,
             "'{}': edges must be int32 or int64, got {}", file.string(),
             dtype_name(edges.scalar_type()));
    graph::CooInput input;
    input.src = edges.select(1, 0);
    input.dst = edges.select(1, 1);
    input.num_nodes = num_nodes;
    input.weights = weights;
    input.keep_edge_ids = options.keep_edge_ids;
    input.edge_types = edge_types;  // each column then grouped by type (DESIGN.md section 3)
    input.edge_time = edge_time;
    return with_file_context(file, [&] { return graph::csc_from_coo(input); });
  }
  GL_CHECK(spec.contains("indptr") && spec.contains("indices"),
           "'{}': 'graph' must name either 'edges' or both 'indptr' and 'indices'",
           meta.file().string());
  graph::CscGraph graph;
  graph.num_nodes = num_nodes;
  const bool map_tables = options.memory_map && !read_tables;
  graph.indptr = meta.array(spec, "indptr", map_tables);
  graph.indices = meta.array(spec, "indices", map_tables);
  if (spec.contains("edge_ids")) graph.edge_ids = meta.array(spec, "edge_ids", options.memory_map);
  graph.weights = weights;
  graph.type_per_edge = edge_types;
  graph.edge_time = edge_time;
  with_file_context(dir / spec.at("indices").get<std::string>(), [&] {
    graph.validate();
    return 0;
  });
  return graph;
}

// Bytes of the arrays that LoadOptions::tables_in_memory reads: a CSC graph's indptr and
// indices and every feature table (with its row scales).
int64_t random_access_table_bytes(const Metadata& meta) {
  const json& root = meta.root();
  const fs::path dir = meta.file().parent_path();
  std::vector<fs::path> files;
  const json& graph = root.at("graph");
  for (const char* key : {"indptr", "indices"}) {
    if (graph.is_object() && graph.contains(key) && graph.at(key).is_string())
      files.push_back(dir / graph.at(key).get<std::string>());
  }
  if (root.contains("node_features") && root.at("node_features").is_object()) {
    for (const auto& [name, entry] : root.at("node_features").items()) {
      if (entry.is_string()) files.push_back(dir / entry.get<std::string>());
      for (const char* key : {"file", "row_scale"}) {
        if (entry.is_object() && entry.contains(key) && entry.at(key).is_string())
          files.push_back(dir / entry.at(key).get<std::string>());
      }
    }
  }
  int64_t total = 0;
  for (const fs::path& file : files) {
    if (!fs::exists(file)) continue;  // reported with its key when it is loaded
    const NpyHeader header = read_npy_header(file);
    int64_t bytes = static_cast<int64_t>(c10::elementSize(header.dtype));
    for (const int64_t size : header.shape) bytes *= size;
    total += bytes;
  }
  return total;
}

// Whether the tables read at random go into memory: asked for, and all of them together fit
// in half of what this process may still use.
bool read_tables_into_memory(const Metadata& meta, const LoadOptions& options) {
  if (!options.tables_in_memory) return false;
  const int64_t bytes = random_access_table_bytes(meta);
  const int64_t available = available_memory_bytes();
  if (available > 0 && bytes <= available / 2) return true;
  if (available > 0) {
    spdlog::info(
        "graph and feature tables ({:.2f} GB) stay memory-mapped: more than half of the {:.2f} "
        "GB available",
        bytes / 1e9, available / 1e9);
  } else {
    spdlog::info("graph and feature tables stay memory-mapped: available memory unknown");
  }
  return false;
}

// A feature table: read into memory, or mapped without read-ahead (rows are read at random).
at::Tensor load_feature_table(const Metadata& meta, const json& object, const std::string& key,
                              const LoadOptions& options, bool read_tables) {
  if (read_tables) return meta.array(object, key, /*memory_map=*/false);
  at::Tensor values = meta.array(object, key, options.memory_map);
  if (options.memory_map) advise_random_access(values.data_ptr(), values.nbytes());
  return values;
}

at::Tensor load_node_ids(const Metadata& meta, const json& object, const std::string& key,
                         int64_t num_nodes, bool memory_map) {
  const fs::path file = meta.file().parent_path() / object.at(key).get<std::string>();
  at::Tensor ids = meta.array(object, key, memory_map);
  GL_CHECK(ids.dim() == 1 && (ids.scalar_type() == at::kLong || ids.scalar_type() == at::kInt),
           "'{}': expected a 1-D int64 array of node ids, got {} {}", file.string(),
           dtype_name(ids.scalar_type()), ids.sizes());
  ids = ids.to(at::kLong);
  if (ids.numel() > 0) {
    const int64_t low = ids.min().item<int64_t>();
    const int64_t high = ids.max().item<int64_t>();
    GL_CHECK(low >= 0 && high < num_nodes, "'{}': node ids must be in [0, {}), found {}",
             file.string(), num_nodes, low < 0 ? low : high);
  }
  return ids;
}

}  // namespace

// "node_types": [{"name": ..., "count": ...}, ...] in id order, "edge_types": [[src, relation,
// dst], ...] indexed by type_per_edge.
void load_schema(const Metadata& meta, Dataset& dataset) {
  const json& root = meta.root();
  const std::string file = meta.file().string();
  GL_CHECK(root.contains("node_types") && root.contains("edge_types") &&
               dataset.graph.type_per_edge.defined(),
           "'{}': a typed graph needs node_types, edge_types and graph.type_per_edge together",
           file);
  std::vector<int64_t> offsets{0};
  for (const json& entry : root.at("node_types")) {
    GL_CHECK(entry.is_object() && entry.contains("name") && entry.contains("count"),
             "'{}': each node_types entry must be {{\"name\": ..., \"count\": ...}}", file);
    dataset.schema.node_types.push_back(meta.get<std::string>(entry, "name", "a string"));
    offsets.push_back(offsets.back() + meta.get<int64_t>(entry, "count", "an integer"));
  }
  for (const json& entry : root.at("edge_types")) {
    GL_CHECK(entry.is_array() && entry.size() == 3 && entry[0].is_string() &&
                 entry[1].is_string() && entry[2].is_string(),
             "'{}': each edge_types entry must be [src_type, relation, dst_type], got {}", file,
             entry.dump());
    dataset.schema.edge_types.push_back({entry[0], entry[1], entry[2]});
  }
  dataset.graph.node_type_offset = at::tensor(offsets, at::kLong);
}

namespace {

Dataset read_dataset(const fs::path& dir, const LoadOptions& options) {
  const Metadata meta(read_metadata(dir / "metadata.json"), dir);
  const json& root = meta.root();
  GL_CHECK(root.is_object(), "'{}': expected a JSON object", meta.file().string());
  check_unknown_keys(root,
                     {"format", "version", "name", "num_nodes", "directed", "graph",
                      "node_features", "labels", "num_classes", "splits", "edge_splits",
                      "edge_split_times", "node_types", "edge_types", "node_timestamp"},
                     "the top level", meta.file(), options.strict);
  GL_CHECK(meta.get<std::string>(root, "format", "\"graphloom-dataset\"") == kDatasetFormat,
           "'{}': format must be \"{}\"", meta.file().string(), kDatasetFormat);
  const int version = meta.get<int>(root, "version", "1");
  GL_CHECK(version == 1, "'{}': unsupported version {} (this graphloom reads version 1)",
           meta.file().string(), version);

  Dataset dataset;
  dataset.name = root.value("name", dir.filename().string());
  dataset.directed = root.value("directed", true);
  const auto num_nodes = meta.get<int64_t>(root, "num_nodes", "a non-negative integer");
  GL_CHECK(num_nodes >= 0, "'{}': num_nodes must be >= 0, got {}", meta.file().string(), num_nodes);
  GL_CHECK(root.contains("graph"), "'{}': missing key 'graph'", meta.file().string());

  Timer timer;
  const bool read_tables = read_tables_into_memory(meta, options);
  dataset.graph = load_graph(meta, dir, num_nodes, options, read_tables);
  if (root.contains("node_types") || root.contains("edge_types")) {
    load_schema(meta, dataset);
  }
  spdlog::debug("loaded graph of '{}' in {:.3f} s", dir.string(), timer.seconds());

  if (root.contains("node_features")) {
    // Each entry is a file name, or {"file": ..., "row_scale": ...} for a scaled feature.
    for (const auto& [name, entry] : root.at("node_features").items()) {
      const json& object = entry.is_object() ? entry : root.at("node_features");
      const std::string key = entry.is_object() ? "file" : name;
      dataset.node_features[name] = load_feature_table(meta, object, key, options, read_tables);
      dataset.node_feature_files[name] =
          meta.file().parent_path() / object.at(key).get<std::string>();
      if (entry.is_object() && entry.contains("row_scale")) {
        dataset.node_feature_scales[name] =
            meta.array(entry, "row_scale", options.memory_map && !read_tables);
      }
    }
  }
  if (root.contains("node_timestamp")) {
    dataset.node_timestamp = load_times(meta, root, "node_timestamp", options.memory_map);
  }
  if (root.contains("labels")) {
    const fs::path file = dir / meta.get<std::string>(root, "labels", "a file name");
    at::Tensor labels = meta.array(root, "labels", options.memory_map);
    GL_CHECK(labels.scalar_type() == at::kLong || labels.scalar_type() == at::kInt,
             "'{}': labels must be int64 (or int32), got {}", file.string(),
             dtype_name(labels.scalar_type()));
    dataset.labels = labels.to(at::kLong);
    dataset.num_classes = meta.get<int64_t>(root, "num_classes", "a positive integer");
  }
  if (root.contains("splits")) {
    for (const auto& [name, file] : root.at("splits").items()) {
      dataset.splits[name] =
          load_node_ids(meta, root.at("splits"), name, num_nodes, options.memory_map);
    }
  }
  // Integer arrays by name under `key` (int32 read as int64); `what` says what they hold.
  const auto load_integer_arrays = [&](const char* key, const char* what) {
    std::map<std::string, at::Tensor> arrays;
    if (!root.contains(key)) return arrays;
    for (const auto& [name, file] : root.at(key).items()) {
      at::Tensor array = meta.array(root.at(key), name, options.memory_map);
      GL_CHECK(array.scalar_type() == at::kLong || array.scalar_type() == at::kInt,
               "'{}': {} '{}' must hold int32/int64 {}", meta.file().string(), key, name, what);
      arrays[name] = array.to(at::kLong);
    }
    return arrays;
  };
  dataset.edge_splits = load_integer_arrays("edge_splits", "node pairs");
  dataset.edge_split_times = load_integer_arrays("edge_split_times", "seconds");
  with_file_context(meta.file(), [&] {
    validate_dataset(dataset);
    return 0;
  });
  return dataset;
}

}  // namespace

Dataset load_dataset(const fs::path& dir, const LoadOptions& options) {
  GL_CHECK_AS(NotFoundError, fs::is_directory(dir), "dataset directory '{}' does not exist",
              dir.string());
  try {
    return read_dataset(dir, options);
  } catch (const json::exception& e) {
    // A value of the wrong JSON type where a direct read expected another (a name that is an
    // object, a file that is a number).
    GL_THROW("'{}': {} (the layout is in docs/file-formats.md)", (dir / "metadata.json").string(),
             e.what());
  }
}

void validate_dataset(const Dataset& dataset) {
  const int64_t n = dataset.num_nodes();
  dataset.schema.validate(dataset.graph);
  for (const auto& [name, pairs] : dataset.edge_splits) {
    GL_CHECK(pairs.dim() == 2 && pairs.size(1) == 2,
             "edge split '{}' must be [M, 2] node pairs, got {}", name, pairs.sizes());
    if (pairs.numel() > 0) {
      const int64_t low = pairs.min().item<int64_t>();
      const int64_t high = pairs.max().item<int64_t>();
      GL_CHECK(low >= 0 && high < n, "edge split '{}': node ids must be in [0, {}), found {}", name,
               n, low < 0 ? low : high);
    }
  }
  for (const auto& [name, time] : dataset.edge_split_times) {
    const auto split = dataset.edge_splits.find(name);
    GL_CHECK(split != dataset.edge_splits.end(), "edge split times given for missing split '{}'",
             name);
    GL_CHECK(time.defined(), "times of edge split '{}' are an undefined tensor", name);
    GL_CHECK(
        time.scalar_type() == at::kLong && time.dim() == 1 && time.size(0) == split->second.size(0),
        "times of edge split '{}' must be int64 [{}] (one per pair), got {} {}", name,
        split->second.size(0), dtype_name(time.scalar_type()), time.sizes());
  }
  for (const auto& [name, feature] : dataset.node_features) {
    const bool scaled = dataset.node_feature_scales.count(name) > 0;
    GL_CHECK((feature.is_floating_point() || (scaled && feature.scalar_type() == at::kChar)) &&
                 feature.dim() >= 1 && feature.size(0) == n,
             "node feature '{}' must be a float (or int8 with a row scale) array with {} rows "
             "(one per node), got {} {}",
             name, n, dtype_name(feature.scalar_type()), feature.sizes());
  }
  for (const auto& [name, scale] : dataset.node_feature_scales) {
    GL_CHECK(dataset.node_features.count(name), "row scale given for missing node feature '{}'",
             name);
    GL_CHECK(scale.scalar_type() == at::kFloat && scale.dim() == 1 && scale.numel() == n,
             "row scale of node feature '{}' must be float32 [{}], got {} {}", name, n,
             dtype_name(scale.scalar_type()), scale.sizes());
  }
  if (dataset.node_timestamp.defined()) {
    GL_CHECK(
        dataset.node_timestamp.scalar_type() == at::kLong && dataset.node_timestamp.numel() == n,
        "node_timestamp must be int64 with one time per node ({}), got {} values", n,
        dataset.node_timestamp.numel());
  }
  if (dataset.labels.defined()) {
    GL_CHECK(dataset.labels.dim() == 1 && dataset.labels.numel() == n,
             "labels must have one value per node ({}), got {}", n, dataset.labels.numel());
    GL_CHECK(dataset.num_classes > 0, "num_classes must be positive, got {}", dataset.num_classes);
    if (n > 0) {
      const int64_t low = dataset.labels.min().item<int64_t>();
      const int64_t high = dataset.labels.max().item<int64_t>();
      GL_CHECK(low >= -1 && high < dataset.num_classes,
               "labels must be in [0, {}) or -1 (unlabeled), found {}", dataset.num_classes,
               low < -1 ? low : high);
    }
  }
}

}  // namespace graphloom::io
