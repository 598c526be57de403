// The report of dataset_report.h: everything is read from the loaded dataset, nothing from disk.
#include "graphloom/io/dataset_report.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "graphloom/base/dtype.h"
#include "graphloom/graph/degree_stats.h"

namespace graphloom::io {
namespace {

nlohmann::json degree_json(const at::Tensor& degrees) {
  const graph::DegreeStats stats = graph::degree_stats(degrees);
  return {{"min", stats.min}, {"mean", stats.mean}, {"max", stats.max}, {"zero", stats.num_zero}};
}

nlohmann::json label_report(const Dataset& dataset) {
  const at::Tensor labeled = dataset.labels.masked_select(dataset.labels >= 0);
  const at::Tensor histogram = at::bincount(labeled, {}, dataset.num_classes);
  return {
      {"num_classes", dataset.num_classes},
      {"label_histogram", std::vector<int64_t>(histogram.data_ptr<int64_t>(),
                                               histogram.data_ptr<int64_t>() + histogram.numel())},
      {"unlabeled", dataset.num_nodes() - labeled.numel()}};
}

nlohmann::json type_report(const Dataset& dataset) {
  const at::Tensor offset = dataset.graph.node_type_offset;
  const at::Tensor per_type =
      at::bincount(dataset.graph.type_per_edge.to(at::kLong), {}, dataset.schema.num_edge_types());
  nlohmann::json node_types = nlohmann::json::object();
  for (int64_t t = 0; t < dataset.schema.num_node_types(); ++t) {
    node_types[dataset.schema.node_types[static_cast<std::size_t>(t)]] =
        offset[t + 1].item<int64_t>() - offset[t].item<int64_t>();
  }
  nlohmann::json edge_types = nlohmann::json::object();
  for (int64_t r = 0; r < dataset.schema.num_edge_types(); ++r) {
    edge_types[dataset.schema.edge_types[static_cast<std::size_t>(r)].canonical_name()] =
        per_type[r].item<int64_t>();
  }
  return {{"node_types", node_types}, {"edge_types", edge_types}};
}

}  // namespace

nlohmann::json dataset_report(const Dataset& dataset) {
  nlohmann::json report = {{"name", dataset.name},
                           {"num_nodes", dataset.num_nodes()},
                           {"num_edges", dataset.graph.num_edges()},
                           {"directed", dataset.directed},
                           {"index_dtype", dtype_name(dataset.graph.indices.scalar_type())},
                           {"weighted", dataset.graph.has_weights()},
                           {"in_degree", degree_json(dataset.graph.in_degrees())},
                           {"out_degree", degree_json(dataset.graph.out_degrees())}};
  nlohmann::json features = nlohmann::json::object();
  for (const auto& [name, tensor] : dataset.node_features) {
    features[name] = {{"dtype", dtype_name(tensor.scalar_type())},
                      {"shape", tensor.sizes().vec()},
                      {"row_scale", dataset.node_feature_scales.count(name) > 0}};
  }
  report["node_features"] = features;
  if (dataset.labels.defined()) report.update(label_report(dataset));
  nlohmann::json splits = nlohmann::json::object();
  for (const auto& [name, ids] : dataset.splits) splits[name] = ids.numel();
  report["splits"] = splits;
  nlohmann::json edge_splits = nlohmann::json::object();
  for (const auto& [name, pairs] : dataset.edge_splits) edge_splits[name] = pairs.size(0);
  report["edge_splits"] = edge_splits;
  if (!dataset.schema.empty()) report.update(type_report(dataset));
  return report;
}

}  // namespace graphloom::io

namespace graphloom::io {
namespace {

std::string degree_line(const nlohmann::json& degree) {
  return fmt::format("min {}  mean {:.2f}  max {}  ({} nodes with none)",
                     degree["min"].get<int64_t>(), degree["mean"].get<double>(),
                     degree["max"].get<int64_t>(), degree["zero"].get<int64_t>());
}

// The lines of the named counts in `report[key]` ("split       train: 140").
std::string count_lines(const nlohmann::json& counts, const char* label, const char* unit = "") {
  std::string text;
  for (const auto& [name, count] : counts.items()) {
    text += fmt::format("{:<11} {}: {}{}\n", label, name, count.get<int64_t>(), unit);
  }
  return text;
}

std::string label_lines(const nlohmann::json& report) {
  if (!report.contains("num_classes")) return "labels      none\n";
  std::string text =
      fmt::format("labels      {} classes, {} unlabeled\n", report["num_classes"].get<int64_t>(),
                  report["unlabeled"].get<int64_t>());
  const auto counts = report["label_histogram"].get<std::vector<int64_t>>();
  for (std::size_t c = 0; c < counts.size(); ++c)
    text += fmt::format("  class {:>3}  {}\n", c, counts[c]);
  return text;
}

}  // namespace

std::string describe_dataset_report(const nlohmann::json& report) {
  std::string text = fmt::format(
      "dataset     {}{}\n", report["name"].get<std::string>(),
      report.contains("path") ? fmt::format("  ({})", report["path"].get<std::string>()) : "");
  text += fmt::format("nodes       {}\n", report["num_nodes"].get<int64_t>());
  text += fmt::format(
      "edges       {}  (directed: {}, indices {}, weighted: {})\n",
      report["num_edges"].get<int64_t>(), report["directed"].get<bool>() ? "yes" : "no",
      report["index_dtype"].get<std::string>(), report["weighted"].get<bool>() ? "yes" : "no");
  if (report.contains("node_types")) {
    text += count_lines(report["node_types"], "node type");
    text += count_lines(report["edge_types"], "edge type");
  }
  text += fmt::format("in-degree   {}\n", degree_line(report["in_degree"]));
  text += fmt::format("out-degree  {}\n", degree_line(report["out_degree"]));
  if (report["node_features"].empty()) text += "features    none\n";
  for (const auto& [name, feature] : report["node_features"].items()) {
    text += fmt::format("feature     {}: {} [{}]{}\n", name, feature["dtype"].get<std::string>(),
                        fmt::join(feature["shape"].get<std::vector<int64_t>>(), ", "),
                        feature["row_scale"].get<bool>() ? " x row scale" : "");
  }
  text += label_lines(report);
  if (report["splits"].empty()) text += "splits      none\n";
  text += count_lines(report["splits"], "split");
  text += count_lines(report["edge_splits"], "edge split", " pairs");
  if (report.contains("load_seconds")) {
    text += fmt::format("loaded in   {:.3f} s\n", report["load_seconds"].get<double>());
  }
  return text;
}

}  // namespace graphloom::io
