// partition_dataset: assign (METIS, streaming or random), then write the parts.
#include "graphloom/partition/partition_job.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include "graphloom/base/error.h"
#include "graphloom/base/timer.h"
#include "graphloom/partition/assign.h"

namespace graphloom::partition {

namespace {

// bool [num_nodes] of the train split, for --balance-train.
at::Tensor train_mask(const io::Dataset& dataset) {
  if (!dataset.splits.count("train")) {
    throw OptionError("balance_train", "needs a train split, which the dataset has not");
  }
  at::Tensor mask = at::zeros({dataset.num_nodes()}, at::kBool);
  mask.index_fill_(0, dataset.splits.at("train"), true);
  return mask;
}

}  // namespace

PartitionEstimate estimate_job(const PartitionJob& c) {
  const int64_t constraints = 1 + (c.balance_train ? 1 : 0) + (c.balance_edges ? 1 : 0);
  return estimate_partition(
      c.data, c.parts, c.method, constraints,
      resolve_metis_scheme(c.metis_scheme, c.parts) == MetisScheme::kRecursive, c.out_edges);
}

PartitionInfo partition_dataset(const io::Dataset& dataset, const PartitionJob& c) {
  Timer timer;
  at::Tensor assignment;
  std::string method(name_of(c.method));
  const at::Tensor train = c.balance_train ? train_mask(dataset) : at::Tensor();
  if (c.method == PartitionMethod::kRandom) {
    assignment = assign_random(dataset.num_nodes(), c.parts, c.seed);
  } else if (c.method == PartitionMethod::kStream) {
    assignment = assign_stream(
        dataset.graph, c.parts,
        {.algorithm = c.stream_algorithm, .train_mask = train, .balance_edges = c.balance_edges});
  } else {
    const MetisScheme scheme = resolve_metis_scheme(c.metis_scheme, c.parts);
    method = fmt::format("metis-{}", name_of(scheme));
    assignment = assign_metis(
        dataset.graph, c.parts,
        {.train_mask = train, .balance_edges = c.balance_edges, .seed = c.seed, .scheme = scheme});
  }
  spdlog::info("assigned {} nodes to {} parts with {} ({:.1f} s); writing the parts",
               dataset.num_nodes(), c.parts, method, timer.seconds());
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
