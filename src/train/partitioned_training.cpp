// PartitionedInputs: a partitioned graph behind its servers as the inputs of a training task.
#include "graphloom/train/partitioned_training.h"

#include <spdlog/spdlog.h>

#include <ATen/ATen.h>
#include <optional>
#include <random>
#include <tuple>

#include "graphloom/base/error.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/train/dataset_inputs.h"

namespace graphloom::train {
std::string self_loop_difference(const partition::Partition& part, const TrainOptions& options) {
  const nn::ModelKind model = options.model.kind;
  if (!adds_self_loops(model, options.self_loops)) return "";
  const graph::CscGraph& graph = part.graph;
  const at::Tensor loops = graph.indices.to(at::kLong) == graph.destinations() + part.node_begin;
  const int64_t nodes_with_loop =
      std::get<0>(at::_unique(graph.destinations().masked_select(loops))).numel();
  if (nodes_with_loop == graph.num_nodes) return "";
  return fmt::format(
      "{} of part {}'s {} nodes have no self-loop: training on a dataset adds one per node for {} "
      "(self_loops {}), but a partitioned graph is trained as it was partitioned. For the same "
      "graph on both paths, partition a copy with self-loops (graphloom convert --self-loops "
      "add, then graphloom partition)",
      graph.num_nodes - nodes_with_loop, part.part, graph.num_nodes, name_of(model),
      name_of(options.self_loops));
}

PartitionedInputs::PartitionedInputs(const PartitionedJob& job, const TrainOptions& options,
                                     TaskKind task, distributed::ProcessGroup* group)
    : cluster_(job.cluster, job.machine, job.cache) {
  const partition::PartitionInfo& info = cluster_.info();
  distributed::DistGraph& graph = cluster_.graph();
  // Featureless graphs (or --embed-dim): the embedding lives on the servers, rows updated by
  // their owners, so no trainer holds or allreduces a num_nodes x dim table.
  const bool link = task == TaskKind::kLinkPrediction;
  const bool has_features = info.features.count("feat") > 0;
  const int64_t embed_dim = job.embed_dim > 0       ? job.embed_dim
                            : link && !has_features ? kFeaturelessEmbedDim
                                                    : 0;
  if (embed_dim > 0) {
    embedding_.emplace(graph, link ? "link-embedding" : "node-embedding", embed_dim,
                       job.embed_optimizer, /*init_scale=*/1.0f, options.seed);
  }
  TrainingInputs& in = inputs_;
  in.name = info.graph_name + " (partitioned)";
  in.graph = &graph;
  in.rows = &cluster_.rows();
  in.num_nodes = info.num_nodes;
  in.num_relations = info.schema.num_edge_types();
  in.typed = !info.schema.empty();
  std::tie(in.in_degrees, in.out_degrees) =
      partition::load_partition_degrees(cluster_.partition_dir(), info);
  in.embedding = embedding_ ? &*embedding_ : nullptr;
  in.layer_outputs = dist_tensor_outputs(graph, group);
  const bool cached = job.cache.policy != features::CachePolicy::kNone;
  in.epoch_counters = [this, cached] {
    std::map<std::string, double> counters{
        {"remote_bytes", static_cast<double>(cluster_.graph().pulled_bytes(/*reset=*/true))}};
    if (cached) {
      const features::CacheStats stats = cluster_.cache_stats(/*reset=*/true);
      counters["cache_hits"] = static_cast<double>(stats.hits);
      counters["cache_misses"] = static_cast<double>(stats.misses);
    }
    return counters;
  };
  if (link) {
    add_link_items(job);
  } else {
    add_node_items(job);
  }
  if (options.temporal && link) {
    // Pairs are sampled at their own times, over parts whose columns the partitioner sorted by
    // time.
    if (!partition::has_edge_times(cluster_.partition_dir(), job.machine)) {
      throw OptionError("temporal", fmt::format("partition '{}' has no edge times: partition a "
                                                "dataset with edge_timestamp or node_timestamp",
                                                cluster_.partition_dir().string()));
    }
  } else if (options.temporal) {
    // The servers sample each part's columns in time order; the seeds' times are pulled from
    // their owners as labels are.
    if (!graph.has("node_timestamp")) {
      throw OptionError("temporal", fmt::format("partition '{}' has no node_timestamp: "
                                                "partition a dataset with timestamps",
                                                cluster_.partition_dir().string()));
    }
    in.node_times = [&graph](const at::Tensor& ids) {
      at::Tensor times = at::empty({ids.numel()}, at::kLong);
      graph.gather("node_timestamp", ids, times);
      return times;
    };
  }
  // The part is read from disk for this only when the model would get self-loops.
  if (adds_self_loops(options.model.kind, options.self_loops)) {
    const partition::Partition* local = cluster_.local_part();
    const std::string difference = self_loop_difference(
        local != nullptr ? *local
                         : partition::load_partition(cluster_.partition_dir(), job.machine),
        options);
    if (!difference.empty()) spdlog::warn("{}", difference);
  }
}

PartitionedInputs::~PartitionedInputs() = default;

// Node classification: this trainer's node_split of the training nodes; all the others.
void PartitionedInputs::add_node_items(const PartitionedJob& job) {
  const partition::PartitionInfo& info = cluster_.info();
  GL_CHECK(info.num_classes > 0, "partition '{}' has no labels", cluster_.partition_dir().string());
  TrainingInputs& in = inputs_;
  const at::Tensor train = cluster_.split("train");
  in.train_nodes =
      train.index_select(0, cluster_.split_items(train, job.local_rank, job.trainers_per_part,
                                                 {.force_even = job.force_even}));
  in.train_nodes_split = true;
  in.valid_nodes = cluster_.split("valid");
  in.test_nodes = cluster_.split("test");
  in.num_classes = info.num_classes;
  spdlog::info("machine {} trainer {}: {} training nodes (node_split{})", job.machine,
               job.local_rank, in.train_nodes.numel(), job.force_even ? ", even" : "");
}

// Link prediction: the edge splits, and this trainer's edge_split of the training pairs.
void PartitionedInputs::add_link_items(const PartitionedJob& job) {
  const partition::PartitionInfo& info = cluster_.info();
  const std::filesystem::path& dir = cluster_.partition_dir();
  TrainingInputs& in = inputs_;
  for (const std::string& name : info.edge_splits) {
    in.edge_splits[name] = partition::load_partition_edge_split(dir, info, name);
  }
  GL_CHECK(in.edge_splits.count("train") > 0,
           "partition '{}' has no training pairs: link prediction needs the partition of a dataset "
           "with edge splits (an lp_* import, MovieLens, or `convert --link-split`)",
           dir.string());
  // edge_split: the machine owning a pair's destination trains on it (its blocks start there),
  // its trainers share those pairs; force_even moves surplus pairs to machines short of theirs.
  const at::Tensor& train = in.edge_splits.at("train");
  in.train_rows = cluster_.split_items(train.select(1, 1).contiguous(), job.local_rank,
                                       job.trainers_per_part, {.force_even = job.force_even});
  for (const std::string& name : info.edge_split_times) {
    in.edge_split_times[name] = partition::load_partition_edge_split_times(dir, info, name);
  }
  spdlog::info("machine {} trainer {}: {} training pairs (edge_split{})", job.machine,
               job.local_rank, in.train_rows.size(0), job.force_even ? ", even" : "");
  // A node type's ids are one range per part: the candidates are the union of those ranges.
  in.target = link_target(in.edge_splits, partition::relabelled_node_types(info), info.schema,
                          info.num_nodes, info.directed);
}

TrainResult train_on_partitions(const PartitionedJob& job, const TrainOptions& options,
                                distributed::ProcessGroup* group) {
  const PartitionedInputs inputs(job, options, TaskKind::kNodeClassification, group);
  return train_node_classification(inputs.inputs(), options, group);
}

LinkResult train_link_on_partitions(const PartitionedJob& job, const TrainOptions& options,
                                    const LinkOptions& link, distributed::ProcessGroup* group) {
  const PartitionedInputs inputs(job, options, TaskKind::kLinkPrediction, group);
  return train_link_prediction(inputs.inputs(), options, link, group);
}

namespace {

// A lone trainer has no process group to agree on a job id with.
std::string random_job_id() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}", device(), device());
}

}  // namespace

std::string inference_tensor_name(const std::string& job_id, int64_t layer) {
  return fmt::format("inference-{}-{}", job_id, layer);
}

// Pushes are acknowledged by the owners, so a barrier after every rank's pushes makes the
// layer readable.
LayerOutputFactory dist_tensor_outputs(distributed::DistGraph& graph,
                                       distributed::ProcessGroup* group) {
  const std::string job = group != nullptr ? group->job_id() : random_job_id();
  return [&graph, group, job](int64_t layer, int64_t dim) {
    auto tensor = std::make_shared<distributed::DistTensor>(
        graph, inference_tensor_name(job, layer), distributed::TensorSchema{at::kFloat, {dim}});
    return LayerOutput{
        .write =
            [tensor](int64_t first_node, const at::Tensor& rows) {
              tensor->push(at::arange(first_node, first_node + rows.size(0), at::kLong), rows);
            },
        .finish =
            [group] {
              if (group != nullptr && group->world_size() > 1) group->barrier();
            },
        .read = [tensor](const at::Tensor& ids) { return tensor->pull(ids); }};
  };
}

}  // namespace graphloom::train
