// `graphloom train`: node classification on a dataset directory, or with no --data on the
// embedded default dataset (the main job). `graphloom plot LOG -o SVG`: its training curves.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/error.h"
#include "graphloom/base/large_block_cache.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/dist/graph_server.h"
#include "graphloom/dist/process_environment.h"
#include "graphloom/dist/process_group.h"
#include "graphloom/features/cached_feature_source.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/generators.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/train/metrics_log.h"
#include "graphloom/train/node_classification.h"
#include "graphloom/train/partitioned_training.h"

namespace graphloom::cli {
namespace {

struct TrainCommand {
  std::string data;
  train::TrainOptions options;
  bool no_progress = false;
  DataParallelFlags parallel;
  // Training on a partitioned graph behind graph servers.
  std::string part_config;
  std::string ip_config;
  int servers_per_machine = 1;
  std::string cluster_id;
  std::string token_file;
  int machine = -1;
  int64_t embed_dim = 0;
  dist::SparseOptimizerOptions embed_optimizer;
  std::string cache_policy = "none";
  std::string cache_size = "0";
  train::TaskKind task = train::TaskKind::kNodeClassification;
  train::LinkOptions link;
  std::vector<std::string> edge_type_fanouts;  // "EDGE_TYPE=F1,F2,..." overrides
};

// The partitioned job of this trainer: machine from --machine, GRAPHLOOM_MACHINE or the node
// rank (rank / local world size); its servers from the ip config.
train::PartitionedJob partitioned_job(const TrainCommand& command, dist::ProcessGroup* group) {
  if (command.ip_config.empty()) throw UsageError("--part-config needs --ip-config FILE");
  const dist::ProcessEnvironment env =
      group != nullptr ? group->environment() : dist::ProcessEnvironment{};
  train::PartitionedJob job;
  job.partition_dir = command.part_config;  // the directory or its partition.json: both read
  job.servers = train::read_ip_config(command.ip_config, command.servers_per_machine);
  job.part = command.machine;
  if (job.part < 0) {
    const char* machine = std::getenv("GRAPHLOOM_MACHINE");
    job.part = machine != nullptr ? std::atoi(machine) : env.rank / env.local_world_size;
  }
  job.local_rank = env.local_rank;
  job.trainers_per_part = env.local_world_size;
  job.cluster_id = command.cluster_id;
  job.embed_dim = command.embed_dim;
  job.embed_optimizer = command.embed_optimizer;
  job.cache_policy = command.cache_policy;
  job.cache_bytes = features::parse_byte_size(command.cache_size);
  if (job.cache_policy != "none" && job.cache_bytes == 0) {
    throw UsageError("--cache-policy " + job.cache_policy + " needs --cache-size (e.g. 256M)");
  }
  job.client.token = dist::cluster_token(command.token_file);
  return job;
}

void print_result(const TrainCommand& command, const train::TrainResult& result,
                  const dist::ProcessGroup* group, double seconds);

train::LinkOptions link_options(const TrainCommand& command) {
  train::LinkOptions link = command.link;
  link.embed_dim = command.embed_dim;
  return link;
}

// Typed graphs: --fanouts for every edge type, with the --edge-type-fanout overrides.
void resolve_edge_type_fanouts(TrainCommand& command, const graph::GraphSchema& schema,
                               const std::string& graph_name) {
  if (schema.empty()) {
    if (command.edge_type_fanouts.empty()) return;
    throw UsageError(fmt::format("--edge-type-fanout {}: '{}' has no edge types",
                                 command.edge_type_fanouts.front(), graph_name));
  }
  spdlog::info("typed graph: {} node types, {} edge types", schema.num_node_types(),
               schema.num_edge_types());
  command.options.edge_type_fanouts =
      sampling::per_edge_type_fanouts(schema, command.options.fanouts, command.edge_type_fanouts);
}

void run_train(TrainCommand& command, dist::ProcessGroup* group) {
  const bool main_rank = group == nullptr || group->rank() == 0;
  configure_allocator();  // mini-batch buffers come and go every step
  // How the step buffers were served, whichever way training ends.
  struct LogAllocator {
    ~LogAllocator() { spdlog::debug("large blocks: {}", describe(large_block_cache_stats())); }
  } log_allocator;
  Timer timer;
  command.options.progress = !command.no_progress;
  command.options.validate();  // before loading anything
  command.link.validate();
  if (!command.part_config.empty()) {
    if (!command.data.empty()) throw UsageError("give --data or --part-config, not both");
    const train::PartitionedJob job = partitioned_job(command, group);  // checks the flags first
    resolve_edge_type_fanouts(command, partition::read_partition_info(job.partition_dir).schema,
                              command.part_config);
    if (command.task == train::TaskKind::kLinkPrediction) {
      const train::LinkResult result =
          train::train_link_on_partitions(job, command.options, link_options(command), group);
      if (main_rank)
        print_link_result(command.options.model.kind, command.link, result, group, timer.seconds());
      return;
    }
    const train::TrainResult result = train::train_on_partitions(job, command.options, group);
    if (main_rank) print_result(command, result, group, timer.seconds());
    return;
  }
  if (command.cache_policy != "none") {
    throw UsageError("--cache-policy caches remote rows: it needs --part-config");
  }
  io::Dataset dataset;
  if (command.data.empty()) {
    spdlog::info("no --data: generating the embedded default dataset (planted partition)");
    dataset = io::generate_planted({});
  } else {
    if (std::filesystem::exists(std::filesystem::path(command.data) / "partition.json")) {
      throw UsageError(fmt::format(
          "--data {0} is a partition directory (it has partition.json), not a dataset: train on "
          "it with --part-config {0} under `graphloom launch` (docs/distributed-guide.md, "
          "\"Distributed training\"), or give --data the dataset it was made from",
          command.data));
    }
    // One trainer per machine reads its tables into memory; several share the page cache.
    dataset = io::load_dataset(
        command.data, {.tables_in_memory = dist::process_environment().local_world_size <= 1});
  }
  spdlog::info("dataset '{}': {} nodes, {} edges, {} classes ({:.1f} s)", dataset.name,
               dataset.num_nodes(), dataset.graph.num_edges(), dataset.num_classes,
               timer.seconds());
  resolve_edge_type_fanouts(command, dataset.schema, dataset.name);
  if (command.task == train::TaskKind::kLinkPrediction) {
    const train::LinkResult result =
        train::train_link_prediction(dataset, command.options, link_options(command), group);
    if (main_rank)
      print_link_result(command.options.model.kind, command.link, result, group, timer.seconds());
    return;
  }
  const train::TrainResult result =
      train::train_node_classification(dataset, command.options, group);
  if (main_rank) print_result(command, result, group, timer.seconds());
}

void print_result(const TrainCommand& command, const train::TrainResult& result,
                  const dist::ProcessGroup* group, double seconds) {
  fmt::print("model {}  epochs {}  best epoch {}  {:.0f} seeds/s\n", command.options.model.kind,
             result.epochs_run, result.best_epoch + 1, result.seeds_per_second);
  fmt::print("validation accuracy {:.4f}\n", result.best_val_acc);
  fmt::print("test accuracy {:.4f}  test macro-F1 {:.4f}\n", result.test_acc, result.test_f1);
  print_time_split(result.times, group);
  fmt::print("total time {:.1f} s\n", seconds);
}

}  // namespace

void print_time_split(const train::StageTimes& t, const dist::ProcessGroup* group) {
  fmt::print(
      "time split of rank 0 (s): sample {:.2f}  fetch {:.2f} (in loader workers)  waiting for "
      "batches {:.2f}  forward {:.2f}  backward {:.2f}  optimizer {:.2f}\n",
      t.sample, t.fetch, t.wait, t.forward, t.backward, t.optimizer);
  if (group) {
    fmt::print("data-parallel: {} ranks, gradient allreduce not hidden by backward {:.2f} s\n",
               group->world_size(), t.allreduce);
  }
}

void add_train_flags(CLI::App* cmd, train::TrainOptions& o) {
  cmd->add_option("--model", o.model.kind,
                  "Model: sage, gcn, gat, mlp (features only), rgcn or rsage (typed graphs: one "
                  "weight per edge type, messages summed (R-GCN) or averaged (relational "
                  "GraphSAGE)), or lightgcn (--task link: learnable embeddings propagated over "
                  "the whole graph; --fanouts gives only the number of layers)")
      ->check(CLI::IsMember({"sage", "gcn", "gat", "mlp", "rgcn", "rsage", "lightgcn"}))
      ->capture_default_str();
  cmd->add_option("--fanouts", o.fanouts,
                  "Neighbors sampled per layer, input layer first (-1 = all); their count is "
                  "the number of layers")
      ->delimiter(',')
      ->capture_default_str();
  add_enum_option(cmd, "--precision", o.precision,
                  "fp32, or bf16: dense layers in bfloat16 (CPU autocast), sparse aggregation and "
                  "the loss in float32");
  cmd->add_flag("--checkpoint-layers", o.model.checkpoint_layers,
                "Recompute each layer's activations in backward instead of keeping them: less "
                "memory for deep models, one more forward per step");
  cmd->add_option("--hidden", o.model.hidden, "Hidden width (per head for GAT)")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--dropout", o.model.dropout, "Dropout on the input of every hidden layer")
      ->check(in_range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--input-dropout", o.model.input_dropout,
                  "Dropout on the input features (-1: gcn and gat use --dropout as in their "
                  "papers, sage and mlp none as in DGL's mini-batch example)")
      ->check(in_range(-1.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--aggregator", o.model.aggregator, "GraphSAGE aggregator: mean, gcn or pool")
      ->check(CLI::IsMember({"mean", "gcn", "pool"}))
      ->capture_default_str();
  cmd->add_option("--heads", o.model.heads, "GAT attention heads of the hidden layers")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--attention-dropout", o.model.attention_dropout, "GAT attention dropout")
      ->check(in_range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--batch-size", o.batch_size, "Seed nodes per mini-batch")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "Training epochs")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--lr", o.lr, "Adam learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "Adam weight decay (L2)")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Random seed (sampling, shuffling, initialisation, dropout)")
      ->capture_default_str();
  cmd->add_option("--workers", o.num_workers, "Loader workers preparing batches concurrently")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--prefetch", o.prefetch, "Batches prepared ahead of training (>= --workers)")
      ->check(positive())
      ->capture_default_str();
}

void add_train_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto command = std::make_shared<TrainCommand>();
  command->parallel.argv = argv;
  train::TrainOptions& o = command->options;
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a GNN for node classification (no --data: the embedded default dataset)");
  cmd->add_option("--data", command->data, "Dataset directory (default: embedded default dataset)");
  add_train_flags(cmd, o);
  cmd->add_option("--patience", o.patience,
                  "Early stopping: epochs without a better validation accuracy (0 = off)")
      ->capture_default_str();
  add_enum_option(cmd, "--eval", o.eval,
                  "Validation and test: 'full' (layer-wise full-neighbor inference over all "
                  "nodes) or 'sampled' (mini-batches with the training fanouts)");
  cmd->add_option("--eval-every", o.eval_every, "Validate every N epochs (the last one always)")
      ->capture_default_str();
  cmd->add_option("--eval-batch-size", o.eval_batch_size, "Nodes per batch of layer-wise inference")
      ->check(positive())
      ->capture_default_str();
  add_enum_option(cmd, "--normalize-features", o.normalize_features,
                  "'row': divide each feature row by its sum (as the GCN and GAT papers do)");
  add_enum_option(cmd, "--self-loops", o.self_loops,
                  "'add' a self-loop per node, 'keep' the graph, or 'auto' (add for gcn and gat)");
  cmd->add_option("--checkpoint", o.checkpoint, "Checkpoint file, written after every epoch");
  cmd->add_flag("--resume", o.resume, "Continue from --checkpoint where the last run stopped");
  cmd->add_option("--metrics-log", o.metrics_log, "Per-epoch metrics as JSON lines");
  cmd->add_flag("--no-progress", command->no_progress, "No progress bar");
  cmd->add_option("--max-batches", o.max_batches,
                  "Stop every epoch after this many batches per trainer (quick runs, "
                  "measurements; 0 = whole epochs)")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_flag(
      "--no-test", [&o](int64_t) { o.final_test = false; },
      "Skip the final evaluation on the test split");
  add_data_parallel_flags(cmd, command->parallel, command->options);
  const char* partitioned = "Training on a partitioned graph (graph servers)";
  cmd->add_option("--part-config", command->part_config,
                  "Partition directory (or its partition.json) whose parts graph servers serve; "
                  "instead of --data")
      ->group(partitioned);
  cmd->add_option("--ip-config", command->ip_config,
                  "The machines, one 'ip [port]' per line (DGL's format): part m is served on "
                  "line m's ip at port .. port+S-1")
      ->group(partitioned);
  cmd->add_option("--num-servers", command->servers_per_machine, "S: graph servers per machine")
      ->check(in_range(1, 64))
      ->capture_default_str()
      ->group(partitioned);
  cmd->add_option("--machine", command->machine,
                  "This trainer's machine (line of the ip config); default GRAPHLOOM_MACHINE or "
                  "rank / local world size")
      ->group(partitioned);
  cmd->add_option("--cluster-id", command->cluster_id,
                  "The servers' --cluster-id: map this machine's part from shared memory "
                  "(otherwise every part is read over RPC)")
      ->group(partitioned);
  cmd->add_option("--token-file", command->token_file,
                  "File holding the cluster token; or set GRAPHLOOM_TOKEN")
      ->group(partitioned);
  cmd->add_option("--embed-dim", command->embed_dim,
                  "Learn a node embedding of this width as the model's input (featureless "
                  "graphs): on partitions its rows live on the servers and are updated by their "
                  "owners; with --task link it is a local embedding (default 64 without features)")
      ->check(non_negative())
      ->capture_default_str()
      ->group(partitioned);
  cmd->add_option("--embed-optimizer", command->embed_optimizer.kind,
                  "Sparse optimizer of the embedding: adam or adagrad")
      ->check(CLI::IsMember({"adam", "adagrad"}))
      ->capture_default_str()
      ->group(partitioned);
  cmd->add_option("--embed-lr", command->embed_optimizer.lr, "Learning rate of the embedding")
      ->capture_default_str()
      ->group(partitioned);
  const char* link_group = "Link prediction";
  add_enum_option(cmd, "--task", command->task,
                  "node: node classification; link: link prediction on the dataset's edge "
                  "splits (lp_* imports, or convert --link-split)")
      ->group(link_group);
  add_link_flags(cmd, command->link, link_group);
  cmd->add_option("--edge-type-fanout", command->edge_type_fanouts,
                  "Typed graphs: EDGE_TYPE=F1,F2,... picks per layer for one edge type (a "
                  "relation name or src:relation:dst), overriding --fanouts, which otherwise "
                  "applies to every edge type; repeat for several types");
  cmd->add_option("--cache-policy", command->cache_policy,
                  "Cache of remote feature rows: none, degree (static: the nodes this machine's "
                  "edges refer to most) or sieve (dynamic, GraphBolt's default)")
      ->check(CLI::IsMember({"none", "degree", "sieve"}))
      ->capture_default_str()
      ->group(partitioned);
  cmd->add_option("--cache-size", command->cache_size,
                  "Bytes of the feature cache per trainer, e.g. 256M or 2G")
      ->capture_default_str()
      ->group(partitioned);
  cmd->callback([command] {
    if (command->options.resume && command->options.checkpoint.empty()) {
      throw UsageError("--resume needs --checkpoint FILE");
    }
    command->parallel.token_file = command->token_file;  // the rendezvous checks it too
    run_data_parallel(command->parallel,
                      [&](dist::ProcessGroup* group) { run_train(*command, group); });
  });

  auto log = std::make_shared<std::string>();
  auto svg = std::make_shared<std::string>("curves.svg");
  CLI::App* plot = app.add_subcommand("plot", "Draw the training curves of a --metrics-log as SVG");
  plot->add_option("log", *log, "Metrics log written by `graphloom train --metrics-log`")
      ->required();
  plot->add_option("-o,--output", *svg, "SVG file to write")->capture_default_str();
  plot->callback([log, svg] {
    train::plot_metrics(*log, *svg);
    fmt::print("wrote {}\n", *svg);
  });
}

}  // namespace graphloom::cli
