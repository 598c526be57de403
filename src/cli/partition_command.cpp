// `graphloom partition`: split a dataset into K parts that own contiguous id ranges.
#include <spdlog/spdlog.h>

#include <memory>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/error.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/features/dataset_encoding.h"
#include "graphloom/io/dataset.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/partition/partition_job.h"
#include "graphloom/partition/partition_report.h"

namespace graphloom::cli {
namespace {

struct PartitionCommand {
  partition::PartitionJob job;
  bool estimate_only = false;  // print the expected peak memory and exit
  std::string feature_dtype = "keep";
};

void print_estimate(const partition::PartitionJob& job) {
  const partition::PartitionEstimate estimate = partition::estimate_job(job);
  fmt::print("{}\n", partition::describe_estimate(estimate));
  const int64_t available = available_memory_bytes();
  if (available > 0 && estimate.peak > available) {
    spdlog::warn(
        "the estimate's high end ({:.1f} GB) exceeds the {:.1f} GB this process may "
        "use: if it runs out, --method stream needs {:.1f} GB",
        estimate.peak / 1e9, available / 1e9,
        partition::estimate_job({.data = job.data,
                                 .parts = job.parts,
                                 .method = partition::PartitionMethod::kStream,
                                 .out_edges = job.out_edges})
                .peak /
            1e9);
  }
}

void run_partition(const PartitionCommand& command) {
  const partition::PartitionJob& job = command.job;
  print_estimate(job);
  if (command.estimate_only) return;
  Timer timer;
  io::Dataset dataset = io::load_dataset(job.data);
  features::encode_dataset_features(dataset, command.feature_dtype);
  const partition::PartitionInfo info = partition::partition_dataset(dataset, job);
  fmt::print("{}", partition::describe_partition(info));
  fmt::print("wrote {} in {:.1f} s, peak RSS {:.2f} GB\n", job.out, timer.seconds(),
             peak_rss_bytes() / 1e9);
  if (!job.balance_edges && partition::imbalance(info.edges_per_part) > 1.5) {
    spdlog::warn(
        "part edge counts are uneven (imbalance {:.2f}): the part with the most "
        "edges does the most sampling; --balance-edges evens them out",
        partition::imbalance(info.edges_per_part));
  }
}

}  // namespace

void add_partition_command(CLI::App& app, const std::string& command_line) {
  auto c = std::make_shared<PartitionCommand>();
  c->job.command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "partition", "Split a dataset into parts that own contiguous node id ranges");
  cmd->add_option("--data", c->job.data, "Dataset directory")->required();
  cmd->add_option("--parts", c->job.parts, "Number of parts")->check(positive());
  add_enum_option(cmd, "--method", c->job.method,
                  "'metis' (min edge cut on the symmetrized graph, see --metis-scheme), 'stream' "
                  "(one pass, memory O(nodes), for graphs METIS cannot take) or 'random'");
  add_enum_option(cmd, "--metis-scheme", c->job.metis_scheme,
                  "metis: 'recursive' (recursive bisection), 'kway' (multilevel k-way, as DGL) or "
                  "'auto' (recursive up to 8 parts, where it was faster and cut fewer edges, "
                  "k-way above, where it keeps the balance)");
  add_enum_option(cmd, "--stream-algorithm", c->job.stream_algorithm,
                  "stream: 'fennel' (each node pays for what it adds to a part: spreads hubs under "
                  "--balance-edges) or 'ldg'");
  cmd->add_option("--out", c->job.out, "Output partition directory (required unless --estimate)");
  cmd->add_flag("--balance-train", c->job.balance_train,
                "metis, stream: spread train nodes evenly too");
  cmd->add_flag("--balance-edges", c->job.balance_edges,
                "metis, stream: balance in-edges (what a part stores and samples) too");
  cmd->add_option("--seed", c->job.seed, "Random seed (METIS and random)");
  cmd->add_flag("--out-edges", c->job.out_edges,
                "Also store each part's out-edges, so that servers can sample in the out "
                "direction (about 12 more bytes per edge on disk)");
  cmd->add_option("--halo", c->job.halo,
                  "Record the 1-hop in-neighbors owned by other parts (0 or 1)")
      ->check(in_range(0, 1));
  cmd->add_flag("--force", c->job.force, "Replace --out if it exists");
  cmd->add_flag("--estimate", c->estimate_only,
                "Print the expected peak memory and time, and exit");
  add_feature_dtype_flag(cmd, c->feature_dtype);
  cmd->callback([c] {
    if (c->job.out.empty() && !c->estimate_only) throw UsageError("partition: --out is required");
    run_partition(*c);
  });
}

}  // namespace graphloom::cli
