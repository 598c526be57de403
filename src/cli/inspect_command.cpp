// `graphloom inspect DIR`: what a dataset holds, at a glance (or as JSON with --json).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "graphloom/base/timer.h"
#include "graphloom/io/dataset_report.h"

namespace graphloom::cli {
namespace {

struct InspectOptions {
  std::string dir;
  bool json = false;
  bool strict = false;
};

std::string degree_line(const nlohmann::json& degree) {
  return fmt::format("min {}  mean {:.2f}  max {}  ({} nodes with none)",
                     degree["min"].get<int64_t>(), degree["mean"].get<double>(),
                     degree["max"].get<int64_t>(), degree["zero"].get<int64_t>());
}

void print_report(const nlohmann::json& report) {
  fmt::print("dataset     {}  ({})\n", report["name"].get<std::string>(),
             report["path"].get<std::string>());
  fmt::print("nodes       {}\n", report["num_nodes"].get<int64_t>());
  fmt::print("edges       {}  (directed: {}, indices {}, weighted: {})\n",
             report["num_edges"].get<int64_t>(), report["directed"].get<bool>() ? "yes" : "no",
             report["index_dtype"].get<std::string>(),
             report["weighted"].get<bool>() ? "yes" : "no");
  if (report.contains("node_types")) {
    for (const auto& [name, count] : report["node_types"].items()) {
      fmt::print("node type   {}: {}\n", name, count.get<int64_t>());
    }
    for (const auto& [name, count] : report["edge_types"].items()) {
      fmt::print("edge type   {}: {}\n", name, count.get<int64_t>());
    }
  }
  fmt::print("in-degree   {}\n", degree_line(report["in_degree"]));
  fmt::print("out-degree  {}\n", degree_line(report["out_degree"]));
  if (report["node_features"].empty()) fmt::print("features    none\n");
  for (const auto& [name, feature] : report["node_features"].items()) {
    fmt::print("feature     {}: {} [{}]{}\n", name, feature["dtype"].get<std::string>(),
               fmt::join(feature["shape"].get<std::vector<int64_t>>(), ", "),
               feature["row_scale"].get<bool>() ? " x row scale" : "");
  }
  if (report.contains("num_classes")) {
    fmt::print("labels      {} classes, {} unlabeled\n", report["num_classes"].get<int64_t>(),
               report["unlabeled"].get<int64_t>());
    const auto counts = report["label_histogram"].get<std::vector<int64_t>>();
    for (std::size_t c = 0; c < counts.size(); ++c) fmt::print("  class {:>3}  {}\n", c, counts[c]);
  } else {
    fmt::print("labels      none\n");
  }
  if (report["splits"].empty()) fmt::print("splits      none\n");
  for (const auto& [name, count] : report["splits"].items()) {
    fmt::print("split       {}: {}\n", name, count.get<int64_t>());
  }
  for (const auto& [name, count] : report["edge_splits"].items()) {
    fmt::print("edge split  {}: {} pairs\n", name, count.get<int64_t>());
  }
  fmt::print("loaded in   {:.3f} s\n", report["load_seconds"].get<double>());
}

void run_inspect(const InspectOptions& options) {
  if (std::filesystem::exists(std::filesystem::path(options.dir) / "partition.json")) {
    print_partition_table(partition::read_partition_info(options.dir));
    return;
  }
  Timer timer;
  const io::Dataset dataset = io::load_dataset(options.dir, {.strict = options.strict});
  const double load_seconds = timer.seconds();
  nlohmann::json report = io::dataset_report(dataset);
  report["path"] = options.dir;
  report["load_seconds"] = load_seconds;
  if (options.json) {
    std::cout << report.dump(1) << "\n";
  } else {
    print_report(report);
  }
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
