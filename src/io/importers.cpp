// Importers: text and raw-binary layouts into a Dataset. Text is parsed with std::from_chars;
// every malformed line is reported with its file and line number.
#include "graphloom/io/importers.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"
#include "graphloom/base/system.h"
#include "graphloom/graph/build.h"
#include "graphloom/io/line_reader.h"
#include "graphloom/io/link_splits.h"
#include "import_readers.h"

namespace graphloom::io {

namespace fs = std::filesystem;

namespace {

char detect_delimiter(std::string_view line) {
  if (line.find(',') != std::string_view::npos) return ',';
  if (line.find('\t') != std::string_view::npos) return '\t';
  return ' ';
}

bool is_comment_or_blank(std::string_view line) {
  const auto first = line.find_first_not_of(" \t");
  return first == std::string_view::npos || line[first] == '#' || line[first] == '%';
}

}  // namespace

char parse_delimiter(const std::string& text) {
  if (text.empty()) return 0;
  if (text == "tab" || text == "\\t") return '\t';
  if (text == "space" || text == "whitespace") return ' ';
  if (text.size() == 1) return text[0];
  throw OptionError("delimiter",
                    fmt::format("must be one character, 'tab' or 'space', got '{}'", text));
}

namespace detail {

EdgeColumns read_edge_text(const fs::path& path, const EdgeListOptions& options) {
  LineReader reader(path);
  EdgeColumns edges;
  char delimiter = options.delimiter;
  bool skip_header = options.header;
  std::vector<std::string_view> fields;
  std::string_view line;
  const std::size_t expected_fields = options.weighted ? 3 : 2;
  while (reader.next(line)) {
    if (is_comment_or_blank(line)) continue;
    if (delimiter == 0) delimiter = detect_delimiter(line);
    if (skip_header) {
      skip_header = false;
      continue;
    }
    split_fields(line, delimiter, fields);
    if (fields.size() < expected_fields) {
      reader.fail(fmt::format("expected {} fields ({}), found {}: '{}'", expected_fields,
                              options.weighted ? "src, dst, weight" : "src, dst", fields.size(),
                              line));
    }
    int64_t src = 0;
    int64_t dst = 0;
    if (!parse_int(fields[0], src) || !parse_int(fields[1], dst) || src < 0 || dst < 0) {
      reader.fail(fmt::format("expected two non-negative integer node ids, found '{}'", line));
    }
    if (options.weighted) {
      double weight = 0;
      if (!parse_float(fields[2], weight)) {
        reader.fail(fmt::format("expected a numeric weight in column 3, found '{}'", fields[2]));
      }
      edges.weights.push_back(static_cast<float>(weight));
    }
    edges.src.push_back(src);
    edges.dst.push_back(dst);
    edges.max_id = std::max({edges.max_id, src, dst});
  }
  return edges;
}

}  // namespace detail

namespace {

using detail::EdgeColumns;
using detail::read_edge_text;

// Builds the CSC of `edges`; `source` names the file in errors.
graph::CscGraph edges_to_csc(EdgeColumns& edges, int64_t num_nodes, const fs::path& source) {
  GL_CHECK(edges.max_id < num_nodes, "'{}': node id {} is out of range for {} nodes",
           source.string(), edges.max_id, num_nodes);
  // Sparse raw ids (a user id of 999999999 among a few thousand nodes) would make every node
  // below them exist: refuse what cannot fit rather than be killed for it. The CSC's build
  // holds about 16 bytes per node (its pointers and the degree counts).
  const double needed_gb = 16.0 * static_cast<double>(num_nodes) / 1e9;
  const double available_gb = static_cast<double>(available_memory_bytes()) / 1e9;
  GL_CHECK(needed_gb < available_gb,
           "'{}': {} nodes (the largest id is {}) need {:.1f} GB for the graph's index alone, "
           "more than the {:.1f} GB available: relabel the node ids to 0..N-1",
           source.string(), num_nodes, edges.max_id, needed_gb, available_gb);
  const auto count = static_cast<int64_t>(edges.src.size());
  graph::CooInput input;
  input.src = at::from_blob(edges.src.data(), {count}, at::kLong);
  input.dst = at::from_blob(edges.dst.data(), {count}, at::kLong);
  if (!edges.weights.empty())
    input.weights = at::from_blob(edges.weights.data(), {count}, at::kFloat);
  input.num_nodes = num_nodes;
  input.keep_edge_ids = false;
  graph::CscGraph graph = graph::csc_from_coo(input);
  if (graph.weights.defined()) graph.weights = graph.weights.clone();  // off the vector's memory
  return graph;
}

}  // namespace

at::Tensor detail::read_raw_array(const fs::path& path, at::ScalarType dtype, int64_t count) {
  GL_CHECK(fs::exists(path), "missing file '{}'", path.string());
  const auto size = static_cast<int64_t>(fs::file_size(path));
  const int64_t element = static_cast<int64_t>(c10::elementSize(dtype));
  if (count < 0) {
    GL_CHECK(size % element == 0, "'{}': size {} is not a multiple of {} bytes", path.string(),
             size, element);
    count = size / element;
  }
  GL_CHECK(size == count * element, "'{}': expected {} bytes ({} x {}), found {}", path.string(),
           count * element, count, dtype_name(dtype), size);
  at::Tensor out = at::empty({count}, dtype);
  std::ifstream in(path, std::ios::binary);
  in.read(static_cast<char*>(out.data_ptr()), size);
  GL_CHECK(in.good() || size == 0, "'{}': read failed", path.string());
  return out;
}

namespace {

using detail::read_raw_array;

at::Tensor read_id_list(const fs::path& path, int64_t num_nodes) {
  LineReader reader(path);
  std::vector<int64_t> ids;
  std::string_view line;
  while (reader.next(line)) {
    if (is_comment_or_blank(line)) continue;
    int64_t id = 0;
    if (!parse_int(line, id) || id < 0 || id >= num_nodes) {
      reader.fail(fmt::format("expected a node id in [0, {}), found '{}'", num_nodes, line));
    }
    ids.push_back(id);
  }
  return at::tensor(ids, at::kLong);
}

int64_t read_single_int(const fs::path& path) {
  LineReader reader(path);
  std::string_view line;
  int64_t value = 0;
  GL_CHECK(reader.next(line), "'{}' is empty (expected one integer)", path.string());
  if (!parse_int(line, value)) reader.fail(fmt::format("expected one integer, found '{}'", line));
  return value;
}

}  // namespace

nlohmann::json detail::read_meta_json(const fs::path& dir, const std::string& what) {
  const fs::path meta_path = dir / "meta.json";
  std::ifstream meta_file(meta_path);
  GL_CHECK(meta_file.good(), "cannot open '{}': is '{}' {}?", meta_path.string(), dir.string(),
           what);
  try {
    return nlohmann::json::parse(meta_file);
  } catch (const nlohmann::json::exception& e) {
    GL_THROW("'{}': invalid JSON: {}", meta_path.string(), e.what());
  }
}

Dataset import_shared_dataset(const fs::path& dir, int split_index) {
  const nlohmann::json meta = detail::read_meta_json(dir, "a folder of ../shared/datasets");
  GL_CHECK(fs::exists(dir / "edges.csv"),
           "'{}' has no edges.csv: heterogeneous layouts are read by their own importer "
           "(movielens_small: import_movielens, which `convert --from shared` picks itself)",
           dir.string());
  Dataset dataset;
  dataset.name = meta.value("name", dir.filename().string());
  dataset.directed = meta.value("directed", true);
  const int64_t num_nodes = meta.at("num_nodes").get<int64_t>();
  const int64_t feat_dim = meta.value("feat_dim", int64_t{0});

  EdgeColumns edges = read_edge_text(dir / "edges.csv", EdgeListOptions{.delimiter = ','});
  dataset.graph = edges_to_csc(edges, num_nodes, dir / "edges.csv");
  if (meta.contains("num_edges")) {
    const auto expected = meta.at("num_edges").get<int64_t>();
    GL_CHECK(dataset.graph.num_edges() == expected, "'{}': meta.json says {} edges, found {}",
             (dir / "edges.csv").string(), expected, dataset.graph.num_edges());
  }
  // Link-prediction graphs: fixed positive/negative pair splits; message passing may only see
  // the training positives, so they replace the full edge list as the graph.
  if (fs::exists(dir / "lp_train_pos.csv")) {
    const std::pair<const char*, const char*> files[] = {{"train", "lp_train_pos.csv"},
                                                         {"valid", "lp_valid_pos.csv"},
                                                         {"valid_neg", "lp_valid_neg.csv"},
                                                         {"test", "lp_test_pos.csv"},
                                                         {"test_neg", "lp_test_neg.csv"}};
    for (const auto& [split, file] : files) {
      EdgeColumns pairs = read_edge_text(dir / file, EdgeListOptions{.delimiter = ','});
      GL_CHECK(pairs.max_id < num_nodes, "'{}': node id {} is out of range for {} nodes",
               (dir / file).string(), pairs.max_id, num_nodes);
      const auto count = static_cast<int64_t>(pairs.src.size());
      dataset.edge_splits[split] =
          at::stack({at::tensor(pairs.src, at::kLong), at::tensor(pairs.dst, at::kLong)}, 1)
              .view({count, 2});
    }
    dataset.graph = graph_of_pairs(dataset.edge_splits.at("train"), num_nodes, !dataset.directed);
  }
  if (feat_dim > 0) {
    dataset.node_features["feat"] =
        read_raw_array(dir / "feat.bin", at::kFloat, num_nodes * feat_dim)
            .view({num_nodes, feat_dim});
  }
  if (fs::exists(dir / "labels.bin")) {
    dataset.labels = read_raw_array(dir / "labels.bin", at::kLong, num_nodes);
    dataset.num_classes = meta.at("num_classes").get<int64_t>();
  }
  for (const char* split : {"train", "valid", "test"}) {
    const fs::path path = split_index == 0
                              ? dir / fmt::format("{}.idx", split)
                              : dir / "splits" / fmt::format("{}_{}.idx", split, split_index);
    if (split_index != 0)
      GL_CHECK(fs::exists(path), "split {} not found: '{}'", split_index, path.string());
    if (!fs::exists(path)) continue;
    at::Tensor ids = read_raw_array(path, at::kLong, -1);
    if (ids.numel() > 0) {
      GL_CHECK(ids.min().item<int64_t>() >= 0 && ids.max().item<int64_t>() < num_nodes,
               "'{}': node ids must be in [0, {})", path.string(), num_nodes);
    }
    dataset.splits[split] = ids;
  }
  validate_dataset(dataset);
  return dataset;
}

Dataset import_ogb_node_dataset(const fs::path& dir, const std::string& split_scheme) {
  const fs::path raw = fs::exists(dir / "raw") ? dir / "raw" : dir;
  GL_CHECK(fs::exists(raw / "edge.csv.gz"),
           "'{}' is not an OGB node-property raw directory (no edge.csv.gz)", raw.string());
  Dataset dataset;
  dataset.name = (raw.filename() == "raw" ? raw.parent_path() : raw).filename().string();
  dataset.directed = true;
  const int64_t num_nodes = read_single_int(raw / "num-node-list.csv.gz");
  GL_CHECK(num_nodes >= 0, "'{}': negative node count", (raw / "num-node-list.csv.gz").string());

  EdgeColumns edges = read_edge_text(raw / "edge.csv.gz", EdgeListOptions{.delimiter = ','});
  dataset.graph = edges_to_csc(edges, num_nodes, raw / "edge.csv.gz");

  if (fs::exists(raw / "node-feat.csv.gz")) {
    LineReader reader(raw / "node-feat.csv.gz");
    std::vector<float> values;
    std::vector<std::string_view> fields;
    std::string_view line;
    int64_t dim = -1;
    while (reader.next(line)) {
      split_fields(line, ',', fields);
      if (dim < 0) dim = static_cast<int64_t>(fields.size());
      if (static_cast<int64_t>(fields.size()) != dim) {
        reader.fail(fmt::format("expected {} feature values, found {}", dim, fields.size()));
      }
      for (auto field : fields) {
        double value = 0;
        if (!parse_float(field, value)) reader.fail(fmt::format("not a number: '{}'", field));
        values.push_back(static_cast<float>(value));
      }
    }
    GL_CHECK(reader.line_number() == num_nodes, "'{}': expected {} rows (one per node), found {}",
             reader.path().string(), num_nodes, reader.line_number());
    dataset.node_features["feat"] =
        at::tensor(values, at::kFloat).view({num_nodes, std::max<int64_t>(dim, 0)});
  }
  if (fs::exists(raw / "node-label.csv.gz")) {
    LineReader reader(raw / "node-label.csv.gz");
    std::vector<int64_t> labels;
    std::string_view line;
    while (reader.next(line)) {
      int64_t label = -1;
      double as_float = 0;
      if (line == "nan" || line == "NaN" || line.empty()) {
        label = -1;
      } else if (parse_int(line, label)) {
      } else if (parse_float(line, as_float) && as_float == static_cast<int64_t>(as_float)) {
        label = static_cast<int64_t>(as_float);
      } else {
        reader.fail(fmt::format(
            "expected one integer class label (multi-label tasks are not supported), found '{}'",
            line));
      }
      labels.push_back(label);
    }
    GL_CHECK(static_cast<int64_t>(labels.size()) == num_nodes,
             "'{}': expected {} labels (one per node), found {}", reader.path().string(), num_nodes,
             labels.size());
    dataset.labels = at::tensor(labels, at::kLong);
    dataset.num_classes = labels.empty() ? 0 : dataset.labels.max().item<int64_t>() + 1;
  }
  const fs::path split_root = raw.filename() == "raw" ? raw.parent_path() / "split" : dir / "split";
  if (fs::exists(split_root)) {
    std::string scheme = split_scheme;
    if (scheme.empty()) {
      std::vector<std::string> schemes;
      for (const auto& entry : fs::directory_iterator(split_root)) {
        if (entry.is_directory()) schemes.push_back(entry.path().filename().string());
      }
      GL_CHECK(schemes.size() == 1,
               "'{}' holds {} split schemes ({}): choose one with --split-scheme",
               split_root.string(), schemes.size(), fmt::join(schemes, ", "));
      scheme = schemes[0];
    }
    for (const char* split : {"train", "valid", "test"}) {
      const fs::path path = split_root / scheme / fmt::format("{}.csv.gz", split);
      GL_CHECK(fs::exists(path), "missing split file '{}'", path.string());
      dataset.splits[split] = read_id_list(path, num_nodes);
    }
  }
  validate_dataset(dataset);
  return dataset;
}

Dataset import_edge_list(const fs::path& path, const EdgeListOptions& options) {
  EdgeColumns edges = read_edge_text(path, options);
  Dataset dataset;
  dataset.name = path.stem().string();
  const int64_t num_nodes = options.num_nodes >= 0 ? options.num_nodes : edges.max_id + 1;
  dataset.graph = edges_to_csc(edges, num_nodes, path);
  spdlog::info("read {} edges over {} nodes from '{}'", dataset.graph.num_edges(), num_nodes,
               path.string());
  return dataset;
}

}  // namespace graphloom::io
