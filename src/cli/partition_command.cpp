// `graphloom partition`: split a dataset into K parts that own contiguous id ranges, and the
// partition table that `partition` and `inspect` print.
#include <spdlog/spdlog.h>

#include <memory>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/error.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/io/dataset.h"
#include "graphloom/partition/assign.h"
#include "graphloom/partition/estimate.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::cli {
namespace {

struct PartitionCommand {
  std::string data;
  std::string out;
  int64_t parts = 2;
  std::string method = "metis";
  std::string stream_algorithm = "fennel";
  std::string metis_scheme = "auto";
  bool balance_train = false;
  bool balance_edges = false;
  uint64_t seed = 0;
  int64_t halo = 0;
  bool out_edges = false;
  bool force = false;
  bool estimate_only = false;
  std::string feature_dtype = "keep";
  std::string command_line;
};

// max / mean of a per-part count (1.0 = perfectly balanced).
double imbalance(const std::vector<int64_t>& counts) {
  double total = 0;
  double largest = 0;
  for (int64_t c : counts)
    total += static_cast<double>(c), largest = std::max(largest, static_cast<double>(c));
  return total > 0 ? largest / (total / static_cast<double>(counts.size())) : 1.0;
}

void run_partition(const PartitionCommand& c) {
  const int64_t constraints = 1 + (c.balance_train ? 1 : 0) + (c.balance_edges ? 1 : 0);
  const partition::MemoryEstimate estimate =
      partition::estimate_partition_memory(c.data, c.parts, c.method, constraints, c.out_edges);
  fmt::print(
      "expected peak memory {:.2f} GB (load {:.2f}, assign {:.2f}, write {:.2f} GB on top of "
      "the loaded graph)\n",
      estimate.peak / 1e9, estimate.load / 1e9, estimate.assign / 1e9, estimate.write / 1e9);
  if (c.estimate_only) return;
  Timer timer;
  io::Dataset dataset = io::load_dataset(c.data);
  encode_features(dataset, c.feature_dtype);
  at::Tensor assignment;
  std::string method = c.method;
  if (c.method == "random") {
    assignment = partition::assign_random(dataset.num_nodes(), c.parts, c.seed);
  } else if (c.method == "stream") {
    assignment =
        partition::assign_stream(dataset.graph, c.parts, {.algorithm = c.stream_algorithm});
  } else {
    const partition::MetisScheme scheme = partition::resolve_metis_scheme(
        c.metis_scheme == "recursive" ? partition::MetisScheme::kRecursive
        : c.metis_scheme == "kway"    ? partition::MetisScheme::kKway
                                      : partition::MetisScheme::kAuto,
        c.parts);
    method = "metis-" + partition::metis_scheme_name(scheme);
    partition::MetisOptions options{
        .balance_edges = c.balance_edges, .seed = c.seed, .scheme = scheme};
    if (c.balance_train) {
      GL_CHECK(dataset.splits.count("train"), "--balance-train: the dataset has no train split");
      options.train_mask = at::zeros({dataset.num_nodes()}, at::kBool);
      options.train_mask.index_fill_(0, dataset.splits.at("train"), true);
    }
    assignment = partition::assign_metis(dataset.graph, c.parts, options);
  }
  spdlog::info("assigned {} nodes to {} parts with {} in {:.1f} s", dataset.num_nodes(), c.parts,
               method, timer.seconds());
  const partition::PartitionInfo info =
      partition::write_partitions(dataset, assignment, c.parts, c.out,
                                  {.method = method,
                                   .seed = c.seed,
                                   .command = c.command_line,
                                   .halo_hops = c.halo,
                                   .out_edges = c.out_edges,
                                   .overwrite = c.force});
  print_partition_table(info);
  fmt::print("wrote {} in {:.1f} s, peak RSS {:.2f} GB\n", c.out, timer.seconds(),
             peak_rss_bytes() / 1e9);
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
  c->command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "partition", "Split a dataset into parts that own contiguous node id ranges");
  cmd->add_option("--data", c->data, "Dataset directory")->required();
  cmd->add_option("--parts", c->parts, "Number of parts")->check(positive())->capture_default_str();
  cmd->add_option(
         "--method", c->method,
         "'metis' (min edge cut on the symmetrized graph, see --metis-scheme), 'stream' (one pass, "
         "memory O(nodes), for graphs METIS cannot take) or 'random'")
      ->check(CLI::IsMember({"metis", "stream", "random"}))
      ->capture_default_str();
  cmd->add_option("--metis-scheme", c->metis_scheme,
                  "metis: 'recursive' (recursive bisection), 'kway' (multilevel k-way, as DGL) or "
                  "'auto' (recursive up to 8 parts, where it was faster and cut fewer edges, "
                  "k-way above, where it keeps the balance)")
      ->check(CLI::IsMember({"auto", "recursive", "kway"}))
      ->capture_default_str();
  cmd->add_option("--stream-algorithm", c->stream_algorithm, "stream: 'fennel' or 'ldg'")
      ->check(CLI::IsMember({"fennel", "ldg"}))
      ->capture_default_str();
  cmd->add_option("--out", c->out, "Output partition directory (required unless --estimate)");
  cmd->add_flag("--balance-train", c->balance_train, "metis: spread train nodes evenly too");
  cmd->add_flag("--balance-edges", c->balance_edges, "metis: balance in-edges per part too");
  cmd->add_option("--seed", c->seed, "Random seed (METIS and random)")->capture_default_str();
  cmd->add_flag("--out-edges", c->out_edges,
                "Also store each part's out-edges, so that servers can sample in the out "
                "direction (about 12 more bytes per edge on disk)");
  cmd->add_option("--halo", c->halo, "Record the 1-hop in-neighbors owned by other parts (0 or 1)")
      ->check(in_range(0, 1))
      ->capture_default_str();
  cmd->add_flag("--force", c->force, "Replace --out if it exists");
  cmd->add_flag("--estimate", c->estimate_only, "Print the expected peak memory and exit");
  add_feature_dtype_flag(cmd, c->feature_dtype);
  cmd->callback([c] {
    if (c->out.empty() && !c->estimate_only) throw UsageError("partition: --out is required");
    run_partition(*c);
  });
}

}  // namespace graphloom::cli
