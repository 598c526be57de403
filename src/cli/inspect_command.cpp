// `graphloom inspect DIR`: what a dataset holds, at a glance (or as JSON with --json).
#include <ATen/ATen.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "graphloom/base/dtype.h"
#include "graphloom/base/timer.h"
#include "graphloom/graph/degree_stats.h"
#include "graphloom/io/dataset.h"

namespace graphloom::cli {
namespace {

struct InspectOptions {
  std::string dir;
  bool json = false;
  bool strict = false;
};

nlohmann::json degree_json(const graph::DegreeStats& stats) {
  return {{"min", stats.min}, {"mean", stats.mean}, {"max", stats.max}, {"zero", stats.num_zero}};
}

void run_inspect(const InspectOptions& options) {
  if (std::filesystem::exists(std::filesystem::path(options.dir) / "partition.json")) {
    print_partition_table(partition::read_partition_info(options.dir));
    return;
  }
  Timer timer;
  const io::Dataset dataset = io::load_dataset(options.dir, {.strict = options.strict});
  const double load_seconds = timer.seconds();
  const auto in_stats = graph::degree_stats(dataset.graph.in_degrees());
  const auto out_stats = graph::degree_stats(dataset.graph.out_degrees());

  nlohmann::json report = {{"name", dataset.name},
                           {"path", options.dir},
                           {"num_nodes", dataset.num_nodes()},
                           {"num_edges", dataset.graph.num_edges()},
                           {"directed", dataset.directed},
                           {"index_dtype", dtype_name(dataset.graph.indices.scalar_type())},
                           {"weighted", dataset.graph.has_weights()},
                           {"in_degree", degree_json(in_stats)},
                           {"out_degree", degree_json(out_stats)},
                           {"load_seconds", load_seconds}};
  nlohmann::json features = nlohmann::json::object();
  for (const auto& [name, tensor] : dataset.node_features) {
    features[name] = {{"dtype", dtype_name(tensor.scalar_type())},
                      {"shape", tensor.sizes().vec()},
                      {"row_scale", dataset.node_feature_scales.count(name) > 0}};
  }
  report["node_features"] = features;
  if (dataset.labels.defined()) {
    const at::Tensor labeled = dataset.labels.masked_select(dataset.labels >= 0);
    const at::Tensor histogram = at::bincount(labeled, {}, dataset.num_classes);
    report["num_classes"] = dataset.num_classes;
    report["label_histogram"] = std::vector<int64_t>(
        histogram.data_ptr<int64_t>(), histogram.data_ptr<int64_t>() + histogram.numel());
    report["unlabeled"] = dataset.num_nodes() - labeled.numel();
  }
  nlohmann::json splits = nlohmann::json::object();
  for (const auto& [name, ids] : dataset.splits) splits[name] = ids.numel();
  report["splits"] = splits;
  nlohmann::json edge_splits = nlohmann::json::object();
  for (const auto& [name, pairs] : dataset.edge_splits) edge_splits[name] = pairs.size(0);
  report["edge_splits"] = edge_splits;
  if (!dataset.schema.empty()) {
    const at::Tensor offset = dataset.graph.node_type_offset;
    const at::Tensor per_type = at::bincount(dataset.graph.type_per_edge.to(at::kLong), {},
                                             dataset.schema.num_edge_types());
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
    report["node_types"] = node_types;
    report["edge_types"] = edge_types;
  }

  if (options.json) {
    std::cout << report.dump(1) << "\n";
    return;
  }
  auto degree_line = [](const graph::DegreeStats& s) {
    return fmt::format("min {}  mean {:.2f}  max {}  ({} nodes with none)", s.min, s.mean, s.max,
                       s.num_zero);
  };
  fmt::print("dataset     {}  ({})\n", dataset.name, options.dir);
  fmt::print("nodes       {}\n", dataset.num_nodes());
  fmt::print("edges       {}  (directed: {}, indices {}, weighted: {})\n",
             dataset.graph.num_edges(), dataset.directed ? "yes" : "no",
             dtype_name(dataset.graph.indices.scalar_type()),
             dataset.graph.has_weights() ? "yes" : "no");
  if (report.contains("node_types")) {
    for (const auto& [name, count] : report["node_types"].items()) {
      fmt::print("node type   {}: {}\n", name, count.get<int64_t>());
    }
    for (const auto& [name, count] : report["edge_types"].items()) {
      fmt::print("edge type   {}: {}\n", name, count.get<int64_t>());
    }
  }
  fmt::print("in-degree   {}\n", degree_line(in_stats));
  fmt::print("out-degree  {}\n", degree_line(out_stats));
  if (dataset.node_features.empty()) fmt::print("features    none\n");
  for (const auto& [name, tensor] : dataset.node_features) {
    fmt::print("feature     {}: {} [{}]{}\n", name, dtype_name(tensor.scalar_type()),
               fmt::join(tensor.sizes(), ", "),
               dataset.node_feature_scales.count(name) ? " x row scale" : "");
  }
  if (dataset.labels.defined()) {
    fmt::print("labels      {} classes, {} unlabeled\n", dataset.num_classes,
               report["unlabeled"].get<int64_t>());
    const auto counts = report["label_histogram"].get<std::vector<int64_t>>();
    for (std::size_t c = 0; c < counts.size(); ++c) {
      fmt::print("  class {:>3}  {}\n", c, counts[c]);
    }
  } else {
    fmt::print("labels      none\n");
  }
  if (dataset.splits.empty()) fmt::print("splits      none\n");
  for (const auto& [name, ids] : dataset.splits)
    fmt::print("split       {}: {}\n", name, ids.numel());
  for (const auto& [name, pairs] : dataset.edge_splits)
    fmt::print("edge split  {}: {} pairs\n", name, pairs.size(0));
  fmt::print("loaded in   {:.3f} s\n", load_seconds);
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Print a dataset's size, degree statistics, features, labels and splits");
  cmd->add_option("dir", options->dir,
                  "Dataset directory (metadata.json + .npy files) or partition directory")
      ->required();
  cmd->add_flag("--json", options->json, "Print the report as JSON instead of text");
  cmd->add_flag("--strict", options->strict, "Treat unknown metadata keys as errors");
  cmd->callback([options] { run_inspect(*options); });
}

}  // namespace graphloom::cli
