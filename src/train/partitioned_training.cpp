// train_on_partitions: DistGraph inputs for the training loop.
#include "graphloom/train/partitioned_training.h"

#include <spdlog/spdlog.h>

#include <ATen/ATen.h>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>

#include "graphloom/base/error.h"
#include "graphloom/dist/dist_graph.h"
#include "graphloom/dist/node_split.h"
#include "graphloom/dist/shared_partition.h"
#include "graphloom/features/cached_feature_source.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::train {
namespace {

at::Tensor split_of_all_parts(const partition::PartitionInfo& info,
                              const std::filesystem::path& dir, const std::string& split) {
  std::vector<at::Tensor> ids;
  for (int64_t part = 0; part < info.num_parts; ++part) {
    ids.push_back(partition::load_partition_split(dir, info, part, split));
  }
  return at::cat(ids);
}

}  // namespace

TrainResult train_on_partitions(const PartitionedJob& job, const TrainOptions& options,
                                dist::ProcessGroup* group) {
  const partition::PartitionInfo info = partition::read_partition_info(job.partition_dir);
  GL_CHECK(static_cast<int64_t>(job.servers.size()) == info.num_parts,
           "'{}' has {} parts but servers were given for {} machines", job.partition_dir.string(),
           info.num_parts, job.servers.size());
  GL_CHECK(job.part >= 0 && job.part < info.num_parts, "machine {} has no part ({} parts)",
           job.part, info.num_parts);
  GL_CHECK(info.num_classes > 0, "partition '{}' has no labels", job.partition_dir.string());
  std::unique_ptr<dist::SharedPartition> local;
  if (!job.cluster_id.empty()) {
    local = dist::SharedPartition::attach(job.cluster_id, job.part, job.client.deadline);
  }
  dist::DistGraph graph(job.servers, job.client, local ? &local->part() : nullptr);
  std::optional<dist::DistEmbedding> embedding;
  if (job.embed_dim > 0) {
    embedding.emplace(graph, "node-embedding", job.embed_dim, job.embed_optimizer,
                      /*init_scale=*/1.0f, options.seed);
  }
  std::optional<features::CachedFeatureSource> cache;
  if (job.cache_policy != "none") {
    features::CacheOptions cache_options{
        .policy = features::cache_policy_from_name(job.cache_policy),
        .capacity_bytes = job.cache_bytes};
    if (local) {  // the local part is read in place: only remote rows are worth caching
      cache_options.bypass_begin = local->part().node_begin;
      cache_options.bypass_end = local->part().node_end;
    }
    if (cache_options.policy == features::CachePolicy::kStatic) {
      const at::Tensor sources =
          local ? local->part().graph.indices
                : partition::load_partition(job.partition_dir, job.part).graph.indices;
      cache_options.static_rows = features::rows_by_reference_count(sources, info.num_nodes);
    }
    cache.emplace(graph, "feat", std::move(cache_options));
    spdlog::info("feature cache ({}): {} rows of 'feat', {:.1f} MB", job.cache_policy,
                 cache->capacity_rows(), job.cache_bytes / 1e6);
  }
  TrainingInputs inputs;
  inputs.name = info.graph_name + " (partitioned)";
  inputs.graph = &graph;
  inputs.rows = cache ? static_cast<const features::FeatureSource*>(&*cache) : &graph;
  inputs.epoch_counters = [&] {
    std::map<std::string, double> counters{
        {"remote_bytes", static_cast<double>(graph.pulled_bytes(/*reset=*/true))}};
    if (cache) {
      const features::CacheStats stats = cache->stats(/*reset=*/true);
      counters["cache_hits"] = static_cast<double>(stats.hits);
      counters["cache_misses"] = static_cast<double>(stats.misses);
    }
    return counters;
  };
  inputs.train_nodes =
      dist::node_split(split_of_all_parts(info, job.partition_dir, "train"), graph.book(), job.part,
                       job.local_rank, job.trainers_per_part, {.force_even = job.force_even});
  inputs.train_nodes_split = true;
  inputs.valid_nodes = split_of_all_parts(info, job.partition_dir, "valid");
  inputs.test_nodes = split_of_all_parts(info, job.partition_dir, "test");
  inputs.num_classes = info.num_classes;
  inputs.num_relations = info.schema.num_edge_types();
  std::tie(inputs.in_degrees, inputs.out_degrees) =
      partition::load_partition_degrees(job.partition_dir, info);
  inputs.embedding = embedding ? &*embedding : nullptr;
  inputs.layer_outputs = dist_tensor_outputs(graph, group);
  spdlog::info("machine {} trainer {}: {} training nodes (node_split{})", job.part, job.local_rank,
               inputs.train_nodes.numel(), job.force_even ? ", even" : "");
  return train_node_classification(inputs, options, group);
}

LinkResult train_link_on_partitions(const PartitionedJob& job, const TrainOptions& options,
                                    const LinkOptions& link, dist::ProcessGroup* group) {
  const partition::PartitionInfo info = partition::read_partition_info(job.partition_dir);
  GL_CHECK(static_cast<int64_t>(job.servers.size()) == info.num_parts,
           "'{}' has {} parts but servers were given for {} machines", job.partition_dir.string(),
           info.num_parts, job.servers.size());
  std::unique_ptr<dist::SharedPartition> local;
  if (!job.cluster_id.empty()) {
    local = dist::SharedPartition::attach(job.cluster_id, job.part, job.client.deadline);
  }
  dist::DistGraph graph(job.servers, job.client, local ? &local->part() : nullptr);
  // Featureless graphs (or --embed-dim): the embedding lives on the servers, rows updated by
  // their owners, so no trainer holds or allreduces a num_nodes x dim table.
  std::optional<dist::DistEmbedding> embedding;
  const int64_t embed_dim =
      link.embed_dim > 0 ? link.embed_dim : (info.features.count("feat") ? 0 : 64);
  if (embed_dim > 0) {
    embedding.emplace(graph, "link-embedding", embed_dim, job.embed_optimizer,
                      /*init_scale=*/1.0f, options.seed);
  }
  LinkInputs inputs;
  inputs.embedding = embedding ? &*embedding : nullptr;
  inputs.layer_outputs = dist_tensor_outputs(graph, group);
  inputs.name = info.graph_name + " (partitioned)";
  inputs.graph = &graph;
  inputs.rows = info.features.count("feat") ? &graph : nullptr;
  inputs.num_nodes = info.num_nodes;
  for (const std::string& name : info.edge_splits) {
    inputs.edge_splits[name] = partition::load_partition_edge_split(job.partition_dir, info, name);
  }
  // edge_split: the machine owning a pair's destination trains on it (its blocks start there),
  // its trainers share those pairs; force_even moves surplus pairs to machines short of theirs.
  GL_CHECK(inputs.edge_splits.count("train") > 0,
           "partition '{}' has no training pairs: --task link needs the partition of a dataset "
           "with edge splits (an lp_* import, MovieLens, or `convert --link-split`)",
           job.partition_dir.string());
  const at::Tensor& train = inputs.edge_splits.at("train");
  inputs.train_rows =
      dist::split_items(train.select(1, 1).contiguous(), graph.book(), job.part, job.local_rank,
                        job.trainers_per_part, {.force_even = job.force_even});
  inputs.train_times = partition::load_partition_edge_split_times(job.partition_dir, info, "train");
  spdlog::info("machine {} trainer {}: {} training pairs (edge_split{})", job.part, job.local_rank,
               inputs.train_rows.size(0), job.force_even ? ", even" : "");
  // A node type's ids are one range per part: the candidates are the union of those ranges.
  inputs.target = link_target(inputs.edge_splits, partition::relabelled_node_types(info),
                              info.schema, info.num_nodes, info.directed);
  inputs.typed = !info.schema.empty();
  inputs.num_relations = info.schema.num_edge_types();
  std::tie(inputs.in_degrees, inputs.out_degrees) =
      partition::load_partition_degrees(job.partition_dir, info);
  return train_link_prediction(inputs, options, link, group);
}

std::vector<std::vector<std::string>> read_ip_config(const std::filesystem::path& path,
                                                     int servers_per_machine) {
  GL_CHECK(servers_per_machine >= 1, "servers per machine must be >= 1, got {}",
           servers_per_machine);
  std::ifstream in(path);
  GL_CHECK(in.good(), "cannot read ip config '{}'", path.string());
  std::vector<std::vector<std::string>> machines;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string ip, extra;
    int port = 30050;
    if (!(fields >> ip)) continue;  // blank line
    if (std::string port_text; fields >> port_text) {
      try {
        std::size_t used = 0;
        port = std::stoi(port_text, &used);
        GL_CHECK(used == port_text.size(), "");
      } catch (const std::exception&) {
        GL_THROW("ip config '{}' line {}: '{}' is not a port", path.string(), line_number,
                 port_text);
      }
    }
    GL_CHECK(!(fields >> extra), "ip config '{}' line {}: expected 'ip [port]', got '{}'",
             path.string(), line_number, line);
    GL_CHECK(port >= 1 && port + servers_per_machine - 1 <= 65535,
             "ip config '{}' line {}: port {} out of range for {} servers", path.string(),
             line_number, port, servers_per_machine);
    std::vector<std::string> servers;
    for (int i = 0; i < servers_per_machine; ++i) {
      servers.push_back(fmt::format("{}:{}", ip, port + i));
    }
    machines.push_back(std::move(servers));
  }
  GL_CHECK(!machines.empty(), "ip config '{}' lists no machine", path.string());
  return machines;
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
LayerOutputFactory dist_tensor_outputs(dist::DistGraph& graph, dist::ProcessGroup* group) {
  const std::string job = group != nullptr ? group->job_id() : random_job_id();
  return [&graph, group, job](int64_t layer, int64_t dim) {
    auto tensor = std::make_shared<dist::DistTensor>(graph, inference_tensor_name(job, layer),
                                                     dist::TensorSchema{at::kFloat, {dim}});
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
