// The text of partition_report.h. Sizes are in GB (1e9 bytes), as the estimate's own figures.
#include "graphloom/partition/partition_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace graphloom::partition {

double imbalance(const std::vector<int64_t>& counts) {
  double total = 0;
  double largest = 0;
  for (const int64_t count : counts) {
    total += static_cast<double>(count);
    largest = std::max(largest, static_cast<double>(count));
  }
  return total > 0 ? largest / (total / static_cast<double>(counts.size())) : 1.0;
}

std::string describe_partition(const PartitionInfo& info) {
  std::string text = fmt::format(
      "partition of '{}': {} parts by {} (seed {}), {} nodes, {} edges\n", info.graph_name,
      info.num_parts, info.method, info.seed, info.num_nodes, info.num_edges);
  text += fmt::format("edge cut    {} ({:.2f}% of edges)\n", info.edge_cut,
                      info.num_edges > 0 ? 100.0 * info.edge_cut / info.num_edges : 0.0);
  text += fmt::format("{:>6} {:>24} {:>12} {:>12} {:>10}\n", "part", "node range", "nodes", "edges",
                      "train");
  std::vector<int64_t> nodes;
  for (int64_t k = 0; k < info.num_parts; ++k) {
    const int64_t begin = k == 0 ? 0 : info.node_range_ends[k - 1];
    nodes.push_back(info.node_range_ends[k] - begin);
    const bool has_train = k < static_cast<int64_t>(info.train_per_part.size());
    text += fmt::format("{:>6} {:>24} {:>12} {:>12} {:>10}\n", k,
                        fmt::format("[{}, {})", begin, info.node_range_ends[k]), nodes.back(),
                        info.edges_per_part[k], has_train ? info.train_per_part[k] : 0);
  }
  text +=
      fmt::format("imbalance (max / mean): nodes {:.3f}  edges {:.3f}  train {:.3f}\n",
                  imbalance(nodes), imbalance(info.edges_per_part), imbalance(info.train_per_part));
  if (info.out_edges) {
    text += fmt::format("out-edges stored (per part: {}): servers sample in both directions\n",
                        fmt::join(info.out_edges_per_part, ", "));
  }
  return text;
}

std::string describe_estimate(const PartitionEstimate& estimate) {
  // METIS's workspace gives a range; the other methods one figure.
  const std::string peak = estimate.peak_low == estimate.peak
                               ? fmt::format("{:.2f} GB", estimate.peak / 1e9)
                               : fmt::format("{:.2f}-{:.2f} GB (the high end on power-law graphs)",
                                             estimate.peak_low / 1e9, estimate.peak / 1e9);
  return fmt::format(
      "expected peak memory {} (load {:.2f}, assign {:.2f}, write {:.2f} GB on top of the "
      "loaded graph); expected time {:.0f} s, of which assignment {:.0f} s (2 cores)",
      peak, estimate.load / 1e9, estimate.assign / 1e9, estimate.write / 1e9, estimate.seconds,
      estimate.assign_seconds);
}

}  // namespace graphloom::partition
