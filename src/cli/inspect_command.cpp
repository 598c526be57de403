// `graphloom inspect DIR`: what a dataset holds, at a glance (or as JSON with --json), and with
// --working-set what an epoch reads of its features.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/timer.h"
#include "graphloom/io/dataset_report.h"
#include "graphloom/loader/working_set.h"
#include "graphloom/partition/partition_report.h"

namespace graphloom::cli {
namespace {

struct InspectOptions {
  std::string dir;
  bool json = false;
  bool strict = false;
  bool working_set = false;
  loader::WorkingSetOptions set;
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
  if (options.working_set) {
    const loader::WorkingSet set = loader::estimate_working_set(dataset, options.set);
    report["working_set"] = {{"batches", set.batches},
                             {"epoch_batches", set.epoch_batches},
                             {"row_bytes", set.row_bytes},
                             {"rows_gathered", set.rows_gathered},
                             {"distinct_rows", set.distinct_rows},
                             {"cache_rows", set.cache_rows},
                             {"rows_missed", set.rows_missed}};
    if (!options.json) {
      fmt::print("{}{}", io::describe_dataset_report(report),
                 loader::describe_working_set(set, options.set));
      return;
    }
  }
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
  loader::WorkingSetOptions& set = options->set;
  cmd->add_flag("--working-set", options->working_set,
                "Also sample an epoch and report the feature rows it gathers, how many are "
                "distinct, and (with --cache-policy and --cache-size) what a cache of that size "
                "leaves to read: what sizes --feature-storage disk's cache");
  cmd->add_option("--fanouts", set.fanouts, "--working-set: neighbors per layer, input first")
      ->delimiter(',');
  cmd->add_option("--batch-size", set.batch_size, "--working-set: seeds per batch")
      ->check(in_range(int64_t{1}, int64_t{1} << 30));
  cmd->add_option("--split", set.split, "--working-set: the node split whose nodes are the seeds");
  cmd->add_option("--batches", set.max_batches,
                  "--working-set: batches of the epoch sampled (0: all of them)")
      ->check(non_negative());
  add_enum_option(cmd, "--cache-policy", set.cache_policy,
                  "--working-set: the cache replayed: degree, sieve, s3-fifo, lru, clock");
  cmd->add_option("--cache-size", set.cache_bytes, "--working-set: its bytes, e.g. 256M")
      ->transform(byte_size());
  cmd->add_option("--seed", set.seed, "--working-set: the shuffle's and the sampler's seed");
  cmd->callback([options] { run_inspect(*options); });
}

}  // namespace graphloom::cli
