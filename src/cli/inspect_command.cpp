// `graphloom inspect DIR`: what a dataset holds, at a glance (or as JSON with --json).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "graphloom/base/timer.h"
#include "graphloom/io/dataset_report.h"
#include "graphloom/partition/partition_report.h"

namespace graphloom::cli {
namespace {

struct InspectOptions {
  std::string dir;
  bool json = false;
  bool strict = false;
};

void run_inspect(const InspectOptions& options) {
  if (std::filesystem::exists(std::filesystem::path(options.dir) / "partition.json")) {
    fmt::print("{}", partition::describe_partition(partition::read_partition_info(options.dir)));
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
    fmt::print("{}", io::describe_dataset_report(report));
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
