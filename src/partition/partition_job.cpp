// partition_dataset: assign (METIS, streaming or random), then write the parts.
#include "graphloom/partition/partition_job.h"

#include <spdlog/spdlog.h>

#include "graphloom/base/error.h"
#include "graphloom/base/timer.h"
#include "graphloom/partition/assign.h"

namespace graphloom::partition {

MemoryEstimate estimate_job_memory(const PartitionJob& c) {
  const int64_t constraints = 1 + (c.balance_train ? 1 : 0) + (c.balance_edges ? 1 : 0);
  return estimate_partition_memory(c.data, c.parts, c.method, constraints, c.out_edges);
}

PartitionInfo partition_dataset(const io::Dataset& dataset, const PartitionJob& c) {
  Timer timer;
  at::Tensor assignment;
  std::string method = c.method;
  if (c.method == "random") {
    assignment = assign_random(dataset.num_nodes(), c.parts, c.seed);
  } else if (c.method == "stream") {
    assignment = assign_stream(dataset.graph, c.parts, {.algorithm = c.stream_algorithm});
  } else {
    const MetisScheme scheme =
        resolve_metis_scheme(c.metis_scheme == "recursive" ? MetisScheme::kRecursive
                             : c.metis_scheme == "kway"    ? MetisScheme::kKway
                                                           : MetisScheme::kAuto,
                             c.parts);
    method = "metis-" + metis_scheme_name(scheme);
    MetisOptions options{.balance_edges = c.balance_edges, .seed = c.seed, .scheme = scheme};
    if (c.balance_train) {
      if (!dataset.splits.count("train")) {
        throw OptionError("balance_train", "needs a train split, which the dataset has not");
      }
      options.train_mask = at::zeros({dataset.num_nodes()}, at::kBool);
      options.train_mask.index_fill_(0, dataset.splits.at("train"), true);
    }
    assignment = assign_metis(dataset.graph, c.parts, options);
  }
  spdlog::info("assigned {} nodes to {} parts with {} in {:.1f} s", dataset.num_nodes(), c.parts,
               method, timer.seconds());
  const PartitionInfo info = write_partitions(dataset, assignment, c.parts, c.out,
                                              {.method = method,
                                               .seed = c.seed,
                                               .command = c.command_line,
                                               .halo_hops = c.halo,
                                               .out_edges = c.out_edges,
                                               .overwrite = c.force});
  return info;
}

}  // namespace graphloom::partition
