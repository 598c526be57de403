// `graphloom partition`: split a dataset into K parts that own contiguous id ranges, and the
// partition table that `partition` and `inspect` print.
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

namespace graphloom::cli {
namespace {

// max / mean of a per-part count (1.0 = perfectly balanced).
double imbalance(const std::vector<int64_t>& counts) {
  double total = 0;
  double largest = 0;
  for (int64_t c : counts)
    total += static_cast<double>(c), largest = std::max(largest, static_cast<double>(c));
  return total > 0 ? largest / (total / static_cast<double>(counts.size())) : 1.0;
}

struct PartitionCommand {
  partition::PartitionJob job;
  bool estimate_only = false;  // print the expected peak memory and exit
  std::string feature_dtype = "keep";
};

// "4.2 GB", or "4.2-9.8 GB" where METIS's workspace gives a range.
std::string memory_range(const partition::PartitionEstimate& estimate) {
  if (estimate.peak_low == estimate.peak) return fmt::format("{:.2f} GB", estimate.peak / 1e9);
  return fmt::format("{:.2f}-{:.2f} GB (the high end on power-law graphs)", estimate.peak_low / 1e9,
                     estimate.peak / 1e9);
}

void print_estimate(const partition::PartitionJob& job) {
  const partition::PartitionEstimate estimate = partition::estimate_job(job);
  fmt::print(
      "expected peak memory {} (load {:.2f}, assign {:.2f}, write {:.2f} GB on top of the "
      "loaded graph); expected time {:.0f} s, of which assignment {:.0f} s (2 cores)\n",
      memory_range(estimate), estimate.load / 1e9, estimate.assign / 1e9, estimate.write / 1e9,
      estimate.seconds, estimate.assign_seconds);
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
  print_partition_table(info);
  fmt::print("wrote {} in {:.1f} s, peak RSS {:.2f} GB\n", job.out, timer.seconds(),
             peak_rss_bytes() / 1e9);
  if (!job.balance_edges && imbalance(info.edges_per_part) > 1.5) {
    spdlog::warn(
        "part edge counts are uneven (imbalance {:.2f}): the part with the most "
        "edges does the most sampling; --balance-edges evens them out",
        imbalance(info.edges_per_part));
  }
}

}  // namespace

void print_partition_table(const partition::PartitionInfo& info) {
  fmt::print("partition of '{}': {} parts by {} (seed {}), {} nodes, {} edges\n", info.graph_name,
             info.num_parts, info.method, info.seed, info.num_nodes, info.num_edges);
  fmt::print("edge cut    {} ({:.2f}% of edges)\n", info.edge_cut,
             info.num_edges > 0 ? 100.0 * info.edge_cut / info.num_edges : 0.0);
  fmt::print("{:>6} {:>24} {:>12} {:>12} {:>10}\n", "part", "node range", "nodes", "edges",
             "train");
  std::vector<int64_t> nodes;
  for (int64_t k = 0; k < info.num_parts; ++k) {
    const int64_t begin = k == 0 ? 0 : info.node_range_ends[k - 1];
    nodes.push_back(info.node_range_ends[k] - begin);
    fmt::print("{:>6} {:>24} {:>12} {:>12} {:>10}\n", k,
               fmt::format("[{}, {})", begin, info.node_range_ends[k]), nodes.back(),
               info.edges_per_part[k],
               k < static_cast<int64_t>(info.train_per_part.size()) ? info.train_per_part[k] : 0);
  }
  fmt::print("imbalance (max / mean): nodes {:.3f}  edges {:.3f}  train {:.3f}\n", imbalance(nodes),
             imbalance(info.edges_per_part), imbalance(info.train_per_part));
  if (info.out_edges) {
    fmt::print("out-edges stored (per part: {}): servers sample in both directions\n",
               fmt::join(info.out_edges_per_part, ", "));
  }
}

void add_partition_command(CLI::App& app, const std::string& command_line) {
  auto c = std::make_shared<PartitionCommand>();
  c->job.command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "partition", "Split a dataset into parts that own contiguous node id ranges");
  cmd->add_option("--data", c->job.data, "Dataset directory")->required();
  cmd->add_option("--parts", c->job.parts, "Number of parts")
      ->check(positive())
      ->capture_default_str();
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
  cmd->add_option("--seed", c->job.seed, "Random seed (METIS and random)")->capture_default_str();
  cmd->add_flag("--out-edges", c->job.out_edges,
                "Also store each part's out-edges, so that servers can sample in the out "
                "direction (about 12 more bytes per edge on disk)");
  cmd->add_option("--halo", c->job.halo,
                  "Record the 1-hop in-neighbors owned by other parts (0 or 1)")
      ->check(in_range(0, 1))
      ->capture_default_str();
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
