// run_train_job: the graph of a job (dataset, default dataset, or partitions), its typed
// fanouts, and the task's training call.
#include "graphloom/train/train_job.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "graphloom/base/error.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/distributed/runtime/ip_config.h"
#include "graphloom/distributed/runtime/process_environment.h"
#include "graphloom/io/generators.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/train/partitioned_training.h"

namespace graphloom::train {
namespace {

// This trainer's partitioned job: its machine (distributed::machine_of) and place among the
// machine's trainers, what it keeps in front of the servers.
PartitionedJob partitioned_job(const TrainJob& job, distributed::ProcessGroup* group) {
  const distributed::ProcessEnvironment env =
      group != nullptr ? group->environment() : distributed::ProcessEnvironment{};
  PartitionedJob out;
  out.cluster = job.cluster;
  out.machine = distributed::machine_of(job.cluster, env);
  out.local_rank = env.local_rank;
  out.trainers_per_part = env.local_world_size;
  out.embed_dim = job.embed_dim;
  out.embed_optimizer = job.cluster.embed_optimizer;
  out.cache = {.policy = job.cluster.cache_policy, .bytes = job.cluster.cache_bytes};
  return out;
}

// Typed graphs: options.fanouts for every edge type, with the edge_type_fanouts overrides.
void resolve_edge_type_fanouts(TrainJob& job, const graph::GraphSchema& schema,
                               const std::string& graph_name) {
  if (schema.empty()) {
    if (job.edge_type_fanouts.empty()) return;
    throw OptionError("edge_type_fanouts", fmt::format("{}: '{}' has no edge types",
                                                       job.edge_type_fanouts.front(), graph_name));
  }
  spdlog::info("typed graph: {} node types, {} edge types", schema.num_node_types(),
               schema.num_edge_types());
  job.options.edge_type_fanouts =
      sampling::per_edge_type_fanouts(schema, job.options.fanouts, job.edge_type_fanouts);
}

io::Dataset load_job_dataset(const TrainJob& job) {
  if (job.data.empty()) {
    if (job.options.feature_storage == FeatureStorage::kDisk) {
      throw OptionError("feature_storage", "disk reads a dataset directory's files: give `data`");
    }
    spdlog::info("no dataset given: generating the embedded default dataset (planted partition)");
    return io::generate_planted({});
  }
  if (std::filesystem::exists(std::filesystem::path(job.data) / "partition.json")) {
    throw OptionError(
        "data", fmt::format("{0} is a partition directory (it has partition.json), not a "
                            "dataset: train on it with `part_config` {0} under `graphloom launch` "
                            "(docs/distributed-guide.md, \"Distributed training\"), or give "
                            "`data` the dataset it was made from",
                            job.data));
  }
  // One trainer per machine reads its tables into memory; several share the page cache. Disk
  // storage maps the tables it does not read (the labels, splits) and reads "feat" itself.
  const FeatureStorage storage = job.options.feature_storage;
  const bool in_memory = storage == FeatureStorage::kMemory ||
                         (storage == FeatureStorage::kAuto &&
                          distributed::process_environment().local_world_size <= 1);
  return io::load_dataset(job.data, {.tables_in_memory = in_memory});
}

}  // namespace

void TrainJob::validate() const {
  options.validate();
  link.validate();
  if (embed_dim < 0) throw OptionError("embed_dim", fmt::format("must be >= 0, got {}", embed_dim));
  if (options.resume && options.checkpoint.empty()) {
    throw OptionError("resume", "needs `checkpoint` FILE");
  }
  const bool cached = cluster.cache_policy != features::CachePolicy::kNone;
  if (cached && cluster.cache_bytes == 0) {
    throw OptionError("cache_policy", fmt::format("{} needs `cache_size` (e.g. 256M)",
                                                  name_of(cluster.cache_policy)));
  }
  if (cluster.part_config.empty()) {
    if (cached && options.feature_storage != FeatureStorage::kDisk) {
      throw OptionError("cache_policy",
                        "caches remote rows (it needs `part_config`) or the rows that "
                        "`feature_storage` disk reads");
    }
    return;
  }
  if (!data.empty()) throw OptionError("data", "or `part_config`: give one, not both");
  if (cluster.ip_config.empty()) throw OptionError("part_config", "needs `ip_config` FILE");
  if (options.feature_storage != FeatureStorage::kAuto) {
    throw OptionError("feature_storage",
                      "applies to a local dataset (`data`): a partition's rows are its servers'");
  }
}

TrainJobResult run_train_job(TrainJob job, distributed::ProcessGroup* group) {
  job.validate();
  // A trainer its launcher restarted (--max-restarts, torchrun's too) continues the job.
  if (const int restarts = distributed::process_environment().restart_count; restarts > 0) {
    if (job.options.checkpoint.empty()) {
      spdlog::warn("restart {} of this job, without a checkpoint: training starts again", restarts);
    } else if (std::filesystem::exists(job.options.checkpoint)) {
      spdlog::info("restart {} of this job: resuming from its checkpoint", restarts);
      job.options.resume = true;
    }
  }
  TrainJobResult result{.task = job.task};
  LinkOptions link = job.link;
  link.embed_dim = job.embed_dim;
  const bool link_task = job.task == TaskKind::kLinkPrediction;
  if (!job.cluster.part_config.empty()) {
    // The ip config first: a mistake in it is reported before the partition is read.
    distributed::read_ip_config(job.cluster.ip_config, job.cluster.servers_per_machine);
    const PartitionedJob partitioned = partitioned_job(job, group);
    resolve_edge_type_fanouts(job, partition::read_partition_info(job.cluster.part_config).schema,
                              job.cluster.part_config);
    if (link_task) {
      result.link = train_link_on_partitions(partitioned, job.options, link, group);
    } else {
      result.node = train_on_partitions(partitioned, job.options, group);
    }
    return result;
  }
  job.options.disk_cache.policy = job.cluster.cache_policy;
  job.options.disk_cache.capacity_bytes = job.cluster.cache_bytes;
  const io::Dataset dataset = load_job_dataset(job);
  spdlog::info("dataset '{}': {} nodes, {} edges, {} classes", dataset.name, dataset.num_nodes(),
               dataset.graph.num_edges(), dataset.num_classes);
  resolve_edge_type_fanouts(job, dataset.schema, dataset.name);
  if (link_task) {
    result.link = train_link_prediction(dataset, job.options, link, group);
  } else {
    result.node = train_node_classification(dataset, job.options, group);
  }
  return result;
}

}  // namespace graphloom::train
