// Reading and validating a partition directory; every error names the file.
#include <ATen/ATen.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"
#include "graphloom/base/mapped_file.h"
#include "graphloom/base/npy.h"
#include "graphloom/graph/weight_alias.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::partition {

namespace fs = std::filesystem;

namespace {

fs::path config_file(const fs::path& path) {
  return fs::is_directory(path) ? path / "partition.json" : path;
}

at::Tensor load_checked(const fs::path& file, int64_t rows, bool integer) {
  GL_CHECK(fs::exists(file), "missing partition file '{}'", file.string());
  at::Tensor t = load_npy(file);
  GL_CHECK(t.dim() >= 1 && (rows < 0 || t.size(0) == rows), "'{}': expected {} rows, found {}",
           file.string(), rows, t.dim() >= 1 ? t.size(0) : 0);
  if (integer) {
    GL_CHECK(t.scalar_type() == at::kLong || t.scalar_type() == at::kInt,
             "'{}': expected int32 or int64 ids", file.string());
  }
  return t;
}

// edge_time.npy: int64, one per edge, non-decreasing within each column (each edge-type
// segment of a typed graph's column): the temporal kernel's binary search trusts it.
at::Tensor load_edge_times(const fs::path& dir, const graph::CscGraph& graph) {
  const fs::path file = dir / "edge_time.npy";
  const at::Tensor times = load_checked(file, graph.num_edges(), true).to(at::kLong).contiguous();
  const int64_t* time = times.data_ptr<int64_t>();
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  const at::Tensor types = graph.type_per_edge.defined()
                               ? graph.type_per_edge.to(at::kLong).contiguous()
                               : at::zeros({graph.num_edges()}, at::kLong);
  const int64_t* type = types.data_ptr<int64_t>();
  for (int64_t v = 0; v < graph.num_nodes; ++v) {
    for (int64_t e = indptr[v] + 1; e < indptr[v + 1]; ++e) {
      GL_CHECK(type[e - 1] != type[e] || time[e - 1] <= time[e],
               "'{}': the times of local column {} are not sorted", file.string(), v);
    }
  }
  return times;
}

// A feature file against its declaration in partition.json: dtype and row width.
void check_declared_feature(const at::Tensor& feature,
                            const std::pair<std::string, int64_t>& declared, const fs::path& file,
                            const std::string& name) {
  int64_t width = 1;
  for (int64_t d = 1; d < feature.dim(); ++d) width *= feature.size(d);
  GL_CHECK(dtype_name(feature.scalar_type()) == declared.first && width == declared.second,
           "'{}': feature '{}' is declared in partition.json as {} with {} values per row, but "
           "the file holds {} with {}",
           file.string(), name, declared.first, declared.second, dtype_name(feature.scalar_type()),
           width);
}

}  // namespace

PartitionInfo read_partition_info(const fs::path& path) {
  const fs::path file = config_file(path);
  std::ifstream in(file);
  GL_CHECK(in.good(), "cannot open '{}': is '{}' a partition directory?", file.string(),
           path.string());
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(in);
    PartitionInfo info;
    GL_CHECK(meta.at("format").get<std::string>() == "graphloom-partition" &&
                 meta.at("version").get<int>() == 1,
             "'{}': not a graphloom-partition version 1 file", file.string());
    info.graph_name = meta.at("graph_name").get<std::string>();
    info.num_parts = meta.at("num_parts").get<int64_t>();
    info.num_nodes = meta.at("num_nodes").get<int64_t>();
    info.num_edges = meta.at("num_edges").get<int64_t>();
    info.method = meta.at("method").get<std::string>();
    info.seed = meta.at("seed").get<uint64_t>();
    info.command = meta.value("command", "");
    info.halo_hops = meta.value("halo_hops", int64_t{0});
    info.edge_cut = meta.value("edge_cut", int64_t{0});
    info.num_classes = meta.value("num_classes", int64_t{0});
    info.node_range_ends = meta.at("node_range_ends").get<std::vector<int64_t>>();
    info.edges_per_part = meta.at("edges_per_part").get<std::vector<int64_t>>();
    info.train_per_part = meta.value("train_per_part", std::vector<int64_t>{});
    const nlohmann::json features = meta.value("node_features", nlohmann::json::object());
    for (const auto& [name, schema] : features.items()) {
      info.features[name] = {schema.at("dtype").get<std::string>(),
                             schema.at("dim").get<int64_t>()};
      if (schema.value("row_scale", false)) info.row_scaled_features.insert(name);
    }
    info.splits = meta.value("splits", std::vector<std::string>{});
    info.directed = meta.value("directed", true);
    info.edge_splits = meta.value("edge_splits", std::vector<std::string>{});
    info.edge_split_times = meta.value("edge_split_times", std::vector<std::string>{});
    info.out_edges = meta.value("out_edges", false);
    if (info.out_edges) {
      info.out_edges_per_part = meta.at("out_edges_per_part").get<std::vector<int64_t>>();
      GL_CHECK(static_cast<int64_t>(info.out_edges_per_part.size()) == info.num_parts,
               "'{}': out_edges_per_part must list every part", file.string());
    }
    if (meta.contains("node_types")) {
      info.schema.node_types = meta.at("node_types").get<std::vector<std::string>>();
      for (const auto& type : meta.at("edge_types")) {
        info.schema.edge_types.push_back({type.at(0).get<std::string>(),
                                          type.at(1).get<std::string>(),
                                          type.at(2).get<std::string>()});
      }
      info.node_type_ranges = meta.at("node_type_ranges").get<std::vector<std::vector<int64_t>>>();
      GL_CHECK(static_cast<int64_t>(info.node_type_ranges.size()) == info.num_parts,
               "'{}': node_type_ranges must list every part", file.string());
      for (int64_t k = 0; k < info.num_parts; ++k) {
        const auto& range = info.node_type_ranges[static_cast<std::size_t>(k)];
        GL_CHECK(static_cast<int64_t>(range.size()) == info.schema.num_node_types() + 1 &&
                     range.front() == (k == 0 ? 0 : info.node_range_ends[k - 1]) &&
                     range.back() == info.node_range_ends[k] &&
                     std::is_sorted(range.begin(), range.end()),
                 "'{}': node_type_ranges of part {} must rise through the part's ids",
                 file.string(), k);
      }
    }
    const auto parts = static_cast<std::size_t>(info.num_parts);
    GL_CHECK(info.num_parts >= 1 && info.node_range_ends.size() == parts &&
                 info.edges_per_part.size() == parts,
             "'{}': num_parts is {} but {} node ranges and {} edge counts are listed",
             file.string(), info.num_parts, info.node_range_ends.size(),
             info.edges_per_part.size());
    GL_CHECK(info.node_range_ends.back() == info.num_nodes,
             "'{}': node ranges end at {}, but num_nodes is {}", file.string(),
             info.node_range_ends.back(), info.num_nodes);
    int64_t edges = 0;
    for (int64_t e : info.edges_per_part) edges += e;
    GL_CHECK(edges == info.num_edges, "'{}': parts hold {} edges, but num_edges is {}",
             file.string(), edges, info.num_edges);
    for (int64_t k = 0; k < info.num_parts; ++k) {
      const fs::path dir = file.parent_path() / fmt::format("part-{}", k);
      GL_CHECK(fs::is_directory(dir), "'{}': part {} is missing ('{}')", file.string(), k,
               dir.string());
    }
    info.book();  // validates the ranges
    return info;
  } catch (const nlohmann::json::exception& e) {
    GL_THROW("'{}': malformed partition config: {}", file.string(), e.what());
  }
}

namespace {

// The out-edges of a part's nodes, checked as the in-edges are: the sampler trusts them.
graph::CscGraph load_out_edges(const fs::path& dir, const PartitionInfo& info, int64_t part,
                               int64_t owned) {
  const int64_t edges = info.out_edges_per_part[static_cast<std::size_t>(part)];
  graph::CscGraph out;
  out.num_nodes = owned;
  out.indptr = load_checked(dir / "out_indptr.npy", owned + 1, true);
  const at::Tensor& indptr = out.indptr;
  GL_CHECK(indptr.scalar_type() == at::kLong && indptr[0].item<int64_t>() == 0 &&
               indptr[owned].item<int64_t>() == edges &&
               (owned == 0 || (indptr.slice(0, 1) >= indptr.slice(0, 0, -1)).all().item<bool>()),
           "'{}': out_indptr must be int64 rising from 0 to the part's {} out-edges",
           (dir / "out_indptr.npy").string(), edges);
  out.indices = load_checked(dir / "out_indices.npy", edges, true);
  out.edge_ids = load_checked(dir / "out_edge_ids.npy", edges, true);
  GL_CHECK(out.edge_ids.scalar_type() == at::kLong, "'{}': edge ids must be int64",
           (dir / "out_edge_ids.npy").string());
  if (edges > 0) {
    GL_CHECK(out.indices.min().item<int64_t>() >= 0 &&
                 out.indices.max().item<int64_t>() < info.num_nodes,
             "'{}': destination ids must be in [0, {})", (dir / "out_indices.npy").string(),
             info.num_nodes);
    GL_CHECK(out.edge_ids.min().item<int64_t>() >= 0 &&
                 out.edge_ids.max().item<int64_t>() < info.num_edges,
             "'{}': edge ids must be in [0, {})", (dir / "out_edge_ids.npy").string(),
             info.num_edges);
  }
  if (fs::exists(dir / "out_weights.npy"))
    out.weights = load_checked(dir / "out_weights.npy", edges, false);
  if (!info.schema.empty()) {
    const fs::path file = dir / "out_type_per_edge.npy";
    out.type_per_edge = load_checked(file, edges, false);
    GL_CHECK(!out.type_per_edge.is_floating_point() &&
                 (edges == 0 ||
                  (out.type_per_edge.min().item<int64_t>() >= 0 &&
                   out.type_per_edge.max().item<int64_t>() < info.schema.num_edge_types())),
             "'{}': edge types must be integers in [0, {})", file.string(),
             info.schema.num_edge_types());
  }
  return graph::with_weight_alias(out);  // after the types: one table per type segment
}

}  // namespace

fs::path partition_feature_file(const fs::path& dir, int64_t part, const std::string& name) {
  return config_file(dir).parent_path() / fmt::format("part-{}", part) /
         fmt::format("feat_{}.npy", name);
}

bool has_edge_times(const fs::path& dir, int64_t part) {
  return fs::exists(config_file(dir).parent_path() / fmt::format("part-{}", part) /
                    "edge_time.npy");
}

Partition load_partition(const fs::path& path, int64_t part) {
  const PartitionInfo info = read_partition_info(path);
  GL_CHECK(part >= 0 && part < info.num_parts, "part {} is outside [0, {})", part, info.num_parts);
  const fs::path dir = config_file(path).parent_path() / fmt::format("part-{}", part);
  Partition p;
  p.part = part;
  p.node_begin = part == 0 ? 0 : info.node_range_ends[part - 1];
  p.node_end = info.node_range_ends[part];
  const int64_t owned = p.node_end - p.node_begin;
  const int64_t edges = info.edges_per_part[part];
  p.graph.num_nodes = owned;
  p.graph.indptr = load_checked(dir / "indptr.npy", owned + 1, true);
  GL_CHECK(p.graph.indptr.scalar_type() == at::kLong, "'{}': indptr must be int64",
           (dir / "indptr.npy").string());
  p.graph.indices = load_checked(dir / "indices.npy", edges, true);
  // The sampler trusts these arrays: check them here, once.
  const at::Tensor& indptr = p.graph.indptr;
  GL_CHECK(indptr[0].item<int64_t>() == 0 && indptr[owned].item<int64_t>() == edges &&
               (owned == 0 || (indptr.slice(0, 1) >= indptr.slice(0, 0, -1)).all().item<bool>()),
           "'{}': indptr must rise from 0 to the part's {} edges", (dir / "indptr.npy").string(),
           edges);
  if (edges > 0) {
    const at::Tensor& indices = p.graph.indices;
    GL_CHECK(indices.min().item<int64_t>() >= 0 && indices.max().item<int64_t>() < info.num_nodes,
             "'{}': source ids must be in [0, {})", (dir / "indices.npy").string(), info.num_nodes);
  }
  p.orig_edge_ids = load_checked(dir / "orig_edge_ids.npy", edges, true);
  p.orig_node_ids = load_checked(dir / "orig_node_ids.npy", owned, true);
  if (fs::exists(dir / "weights.npy"))
    p.graph.weights = load_checked(dir / "weights.npy", edges, false);
  if (fs::exists(dir / "node_timestamp.npy")) {
    p.node_timestamp = load_checked(dir / "node_timestamp.npy", owned, true).to(at::kLong);
  }
  if (info.out_edges) p.out_graph = load_out_edges(dir, info, part, owned);
  if (!info.schema.empty()) {
    p.graph.type_per_edge = load_checked(dir / "type_per_edge.npy", edges, false);
    const at::Tensor types = p.graph.type_per_edge;
    GL_CHECK(!types.is_floating_point() &&
                 (edges == 0 || (types.min().item<int64_t>() >= 0 &&
                                 types.max().item<int64_t>() < info.schema.num_edge_types())),
             "'{}': edge types must be integers in [0, {})", (dir / "type_per_edge.npy").string(),
             info.schema.num_edge_types());
    p.graph.node_type_offset =
        at::tensor(info.node_type_ranges[static_cast<std::size_t>(part)], at::kLong) - p.node_begin;
  }
  if (fs::exists(dir / "edge_time.npy")) p.graph.edge_time = load_edge_times(dir, p.graph);
  for (const auto& [name, schema] : info.features) {
    p.features[name] = load_checked(dir / fmt::format("feat_{}.npy", name), owned, false);
    check_declared_feature(p.features[name], schema, dir / fmt::format("feat_{}.npy", name), name);
    advise_random_access(p.features[name].data_ptr(), p.features[name].nbytes());
    if (info.row_scaled_features.count(name)) {
      const fs::path file = dir / fmt::format("feat_{}_row_scale.npy", name);
      p.feature_scales[name] = load_checked(file, owned, false);
      GL_CHECK(p.feature_scales[name].scalar_type() == at::kFloat, "'{}': expected float32 scales",
               file.string());
    }
  }
  if (fs::exists(dir / "labels.npy")) {
    p.labels = load_checked(dir / "labels.npy", owned, true);
    GL_CHECK(info.num_classes <= 0 || owned == 0 ||
                 (p.labels.min().item<int64_t>() >= -1 &&
                  p.labels.max().item<int64_t>() < info.num_classes),
             "'{}': labels must be in [-1, {}) (num_classes in partition.json), found [{}, {}]",
             (dir / "labels.npy").string(), info.num_classes, p.labels.min().item<int64_t>(),
             p.labels.max().item<int64_t>());
  }
  for (const std::string& split : info.splits) {
    p.splits[split] = load_checked(dir / fmt::format("{}_idx.npy", split), -1, true);
  }
  if (p.splits.count("train") && static_cast<int64_t>(info.train_per_part.size()) > part) {
    GL_CHECK(p.splits["train"].numel() == info.train_per_part[part],
             "'{}': holds {} training nodes, but partition.json's train_per_part says {}",
             (dir / "train_idx.npy").string(), p.splits["train"].numel(),
             info.train_per_part[part]);
  }
  if (fs::exists(dir / "halo_nodes.npy"))
    p.halo_nodes = load_checked(dir / "halo_nodes.npy", -1, true);
  // Weighted sampling reads alias tables, built once here and shared with the backup servers.
  p.graph = graph::with_weight_alias(p.graph);
  return p;
}

at::Tensor load_partition_split(const std::filesystem::path& dir, const PartitionInfo& info,
                                int64_t part, const std::string& split) {
  GL_CHECK(part >= 0 && part < info.num_parts, "part {} does not exist: '{}' has {} parts", part,
           dir.string(), info.num_parts);
  GL_CHECK(std::find(info.splits.begin(), info.splits.end(), split) != info.splits.end(),
           "partition '{}' has no '{}' split", dir.string(), split);
  const at::Tensor ids =
      load_checked(config_file(dir).parent_path() / fmt::format("part-{}", part) /
                       fmt::format("{}_idx.npy", split),
                   -1, true);
  const int64_t begin = part == 0 ? 0 : info.node_range_ends[part - 1];
  GL_CHECK(ids.numel() == 0 || (ids.min().item<int64_t>() >= begin &&
                                ids.max().item<int64_t>() < info.node_range_ends[part]),
           "'{}' split of part {} holds ids outside the part", split, part);
  return ids.to(at::kLong);
}

at::Tensor relabelled_node_types(const PartitionInfo& info) {
  if (info.schema.empty()) return {};
  at::Tensor types = at::empty({info.num_nodes}, at::kLong);
  for (const auto& range : info.node_type_ranges) {
    for (std::size_t t = 0; t + 1 < range.size(); ++t) {
      types.slice(0, range[t], range[t + 1]).fill_(static_cast<int64_t>(t));
    }
  }
  return types;
}

at::Tensor load_partition_edge_split(const std::filesystem::path& dir, const PartitionInfo& info,
                                     const std::string& name) {
  GL_CHECK(
      std::find(info.edge_splits.begin(), info.edge_splits.end(), name) != info.edge_splits.end(),
      "partition '{}' has no '{}' edge split (partition a dataset that has edge splits)",
      dir.string(), name);
  const fs::path file = config_file(dir).parent_path() / fmt::format("edge_split_{}.npy", name);
  const at::Tensor pairs = load_checked(file, -1, true).to(at::kLong);
  GL_CHECK(pairs.dim() == 2 && pairs.size(1) == 2, "'{}': expected [M, 2] node pairs",
           file.string());
  GL_CHECK(pairs.numel() == 0 ||
               (pairs.min().item<int64_t>() >= 0 && pairs.max().item<int64_t>() < info.num_nodes),
           "'{}': node ids must be in [0, {})", file.string(), info.num_nodes);
  return pairs;
}

at::Tensor load_partition_edge_split_times(const std::filesystem::path& dir,
                                           const PartitionInfo& info, const std::string& name) {
  const auto& timed = info.edge_split_times;
  if (std::find(timed.begin(), timed.end(), name) == timed.end()) return {};
  const fs::path file =
      config_file(dir).parent_path() / fmt::format("edge_split_{}_time.npy", name);
  const at::Tensor times = load_checked(file, -1, true);
  GL_CHECK(
      times.dim() == 1 && (times.scalar_type() == at::kLong || times.scalar_type() == at::kInt),
      "'{}': expected int64 [M] pair times", file.string());
  return times.to(at::kLong);
}

std::pair<at::Tensor, at::Tensor> load_partition_degrees(const std::filesystem::path& dir,
                                                         const PartitionInfo& info) {
  std::vector<at::Tensor> in, out;
  for (int64_t part = 0; part < info.num_parts; ++part) {
    const fs::path part_dir = config_file(dir).parent_path() / fmt::format("part-{}", part);
    if (!fs::exists(part_dir / "in_degree.npy")) return {};
    const int64_t owned =
        info.node_range_ends[part] - (part == 0 ? 0 : info.node_range_ends[part - 1]);
    in.push_back(load_checked(part_dir / "in_degree.npy", owned, true).to(at::kLong));
    out.push_back(load_checked(part_dir / "out_degree.npy", owned, true).to(at::kLong));
  }
  return {at::cat(in), at::cat(out)};
}

Partition join_partitions(const std::vector<Partition>& parts) {
  GL_CHECK(!parts.empty(), "join_partitions needs at least one part");
  Partition whole;
  whole.node_begin = 0;
  std::vector<at::Tensor> indptrs, indices, weights, types, labels, edge_times, node_times;
  std::map<std::string, std::vector<at::Tensor>> features, scales;
  int64_t edges = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const Partition& part = parts[k];
    GL_CHECK(part.node_begin == whole.node_end, "part {} starts at node {}, expected {}", k,
             part.node_begin, whole.node_end);
    whole.node_end = part.node_end;
    indptrs.push_back((k == 0 ? part.graph.indptr : part.graph.indptr.slice(0, 1)) + edges);
    indices.push_back(part.graph.indices.to(at::kLong));
    if (part.graph.weights.defined()) weights.push_back(part.graph.weights);
    if (part.graph.type_per_edge.defined()) types.push_back(part.graph.type_per_edge);
    if (part.labels.defined()) labels.push_back(part.labels);
    if (part.graph.edge_time.defined()) edge_times.push_back(part.graph.edge_time);
    if (part.node_timestamp.defined()) node_times.push_back(part.node_timestamp);
    for (const auto& [name, tensor] : part.features) features[name].push_back(tensor);
    for (const auto& [name, tensor] : part.feature_scales) scales[name].push_back(tensor);
    edges += part.graph.num_edges();
  }
  whole.graph.num_nodes = whole.node_end;
  whole.graph.indptr = at::cat(indptrs);
  whole.graph.indices = at::cat(indices);
  if (weights.size() == parts.size()) whole.graph.weights = at::cat(weights);
  // Node types are not one range each over the joined ids (every part has its own ranges):
  // the joined graph keeps the edge types only.
  if (types.size() == parts.size()) whole.graph.type_per_edge = at::cat(types);
  if (labels.size() == parts.size()) whole.labels = at::cat(labels);
  if (edge_times.size() == parts.size()) whole.graph.edge_time = at::cat(edge_times);
  if (node_times.size() == parts.size()) whole.node_timestamp = at::cat(node_times);
  for (const auto& [name, tensors] : features) {
    if (tensors.size() == parts.size()) whole.features[name] = at::cat(tensors);
  }
  for (const auto& [name, tensors] : scales) {
    if (tensors.size() == parts.size()) whole.feature_scales[name] = at::cat(tensors);
  }
  return whole;
}

}  // namespace graphloom::partition
