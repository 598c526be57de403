// `graphloom train`: node classification or link prediction on a dataset directory or on graph
// servers, or with no --data on the embedded default dataset (the main job); its flag groups,
// some shared with `bench train`. `graphloom plot LOG -o SVG`: its training curves.
#include <spdlog/spdlog.h>

#include <memory>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/atomic_output.h"
#include "graphloom/base/error.h"
#include "graphloom/base/large_block_cache.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/features/cached_feature_source.h"
#include "graphloom/train/metrics_log.h"
#include "graphloom/train/result_report.h"
#include "graphloom/train/train_job.h"

namespace graphloom::cli {
namespace {

struct TrainCommand {
  train::TrainJob job;
  std::filesystem::path result_json;
  bool no_progress = false;
  distributed::DataParallelOptions parallel;
};

void run_train(TrainCommand& command, distributed::ProcessGroup* group) {
  configure_allocator();  // mini-batch buffers come and go every step
  // How the step buffers were served, whichever way training ends.
  struct LogAllocator {
    ~LogAllocator() { spdlog::debug("large blocks: {}", describe(large_block_cache_stats())); }
  } log_allocator;
  Timer timer;
  train::TrainJob& job = command.job;
  job.options.progress = !command.no_progress;
  const train::TrainJobResult result = train::run_train_job(job, group);
  if (group != nullptr && group->rank() != 0) return;
  const int world_size = group ? group->world_size() : 1;
  const double seconds = timer.seconds();
  fmt::print("{}", train::describe_result(job, result, world_size, seconds));
  if (!command.result_json.empty()) {
    const std::string text = train::result_json(job, result, world_size, seconds).dump(2) + "\n";
    AtomicFile file(command.result_json, /*durable=*/false, "result");
    file.write(text.data(), text.size());
    file.commit();
  }
}

void add_partitioned_flags(CLI::App* cmd, TrainCommand& command) {
  const HelpGroup group(cmd, "Training on a partitioned graph (graph servers)");
  train::ClusterOptions& cluster = command.job.cluster;
  cmd->add_option("--part-config", cluster.part_config,
                  "Partition directory (or its partition.json) whose parts graph servers serve; "
                  "instead of --data");
  cmd->add_option("--ip-config", cluster.ip_config,
                  "The machines, one 'ip [port]' per line (DGL's format): part m is served on "
                  "line m's ip at port .. port+S-1");
  cmd->add_option("--num-servers", cluster.servers_per_machine, "S: graph servers per machine")
      ->check(in_range(1, 64));
  cmd->add_option("--machine", cluster.machine,
                  "This trainer's machine (line of the ip config); -1: GRAPHLOOM_MACHINE, else "
                  "rank / local world size");
  cmd->add_option("--cluster-id", cluster.cluster_id,
                  "The servers' --cluster-id: map this machine's part from shared memory "
                  "(otherwise every part is read over RPC)");
  cmd->add_option("--rpc-timeout", cluster.deadline_seconds,
                  "Seconds a call to a graph server may take, and that a part may be without a "
                  "live server (all of its servers down or unreachable) before training stops "
                  "with an error naming it")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--token-file", cluster.token_file,
                  "File holding the cluster token; or set GRAPHLOOM_TOKEN");
  cmd->add_option("--tls-ca", cluster.tls_ca,
                  "TLS to servers run with --tls-cert: the CA (or self-signed certificate) "
                  "that signed their certificates (PEM)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tls-cert", cluster.tls_cert,
                  "This trainer's certificate (PEM), for servers that require client "
                  "certificates (their --tls-ca); with --tls-key")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tls-key", cluster.tls_key, "The key of --tls-cert (PEM)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--embed-dim", command.job.embed_dim,
                  "Learn a node embedding of this width as the model's input (featureless "
                  "graphs): on partitions its rows live on the servers and are updated by their "
                  "owners; with --task link it is a local embedding (default 64 without features)")
      ->check(non_negative());
  cmd->add_option("--embed-optimizer", cluster.embed_optimizer.kind,
                  "Sparse optimizer of the embedding: adam or adagrad")
      ->check(CLI::IsMember({"adam", "adagrad"}));
  cmd->add_option("--embed-lr", cluster.embed_optimizer.lr, "Learning rate of the embedding");
  add_enum_option(cmd, "--cache-policy", cluster.cache_policy,
                  "Cache of remote feature rows (or of --feature-storage disk's reads): none; "
                  "degree (static: the nodes this machine's "
                  "edges refer to most); or a dynamic cache evicting by sieve (GraphBolt's "
                  "default), s3-fifo, lru or clock");
  cmd->add_option("--cache-size", cluster.cache_bytes,
                  "Bytes of the feature cache per trainer, e.g. 256M or 2G")
      ->transform(byte_size());
}

// `train --task link`'s flags.
void add_link_flags(CLI::App* cmd, train::LinkOptions& link) {
  add_enum_option(cmd, "--scorer", link.scorer,
                  "Pair score: dot (product of the two embeddings) or mlp (on their element-wise "
                  "product)");
  add_enum_option(cmd, "--loss", link.loss,
                  "bce (positives 1, negatives 0) or bpr (each positive above its negatives)");
  cmd->add_option("--negatives", link.negatives, "Negative pairs per positive edge")
      ->check(positive());
  add_enum_option(cmd, "--negative-sampler", link.negative_sampler,
                  "Negative destinations: uniform, or degree (degree^0.75, harder)");
  cmd->add_flag("--bias", link.destination_bias,
                "Learn a bias per destination node added to every score (a popularity prior: "
                "queries with no training pairs then rank popular candidates first)");
  cmd->add_option("--recency-half-life", link.recency_half_life_days,
                  "Time-aware training, in days: each epoch draws its training pairs with "
                  "probability halving per this many days before the latest one (needs pair "
                  "times in unix seconds, e.g. a MovieLens import or its partitions); 0 draws "
                  "every pair once")
      ->check(non_negative());
  cmd->add_flag("--popularity-prior", link.popularity_prior,
                "Add log(1 + the destination's training pair count) times a learned scale to "
                "every score, the count recency-weighted with --recency-half-life: queries "
                "with no training pairs rank by (recent) popularity");
  cmd->add_option("--hits-k", link.hits_k, "K of the Hits@K reported on the test split")
      ->check(positive());
}

}  // namespace

void add_data_flag(CLI::App* cmd, std::string& data) {
  cmd->add_option("--data", data,
                  "Dataset directory (default: the embedded default dataset, generated in memory)");
}

void add_train_flags(CLI::App* cmd, train::TrainOptions& o) {
  add_enum_option(cmd, "--model", o.model.kind,
                  "Model: sage, gcn, gat, mlp (features only), rgcn or rsage (typed graphs: one "
                  "weight per edge type, messages summed (R-GCN) or averaged (relational "
                  "GraphSAGE)), or lightgcn (--task link: learnable embeddings propagated over "
                  "the whole graph; --fanouts gives only the number of layers)");
  cmd->add_option("--fanouts", o.fanouts,
                  "Neighbors sampled per layer, input layer first (-1 = all); their count is "
                  "the number of layers")
      ->delimiter(',');
  add_enum_option(cmd, "--sampler", o.sampler,
                  "neighbor: each node picks its own --fanouts neighbors; labor: LABOR-0 "
                  "(GraphBolt's LayerNeighborSampler): each candidate neighbor draws one "
                  "random number shared by every node that reaches it, so nodes with common "
                  "neighbors pick the same ones: --fanouts picks per node on average, far "
                  "fewer distinct nodes (and feature rows) per batch");
  cmd->add_flag("--layer-dependency", o.labor.layer_dependency,
                "--sampler labor: the same random numbers in every layer (fewer distinct "
                "nodes still)");
  cmd->add_option("--batch-dependency", o.labor.batch_dependency,
                  "--sampler labor: random numbers that drift over this many consecutive "
                  "batches (1: new every batch), so consecutive batches share nodes and a "
                  "feature cache hits more")
      ->check(positive());
  cmd->add_option("--importance-sampling", o.labor.importance_sampling,
                  "--sampler labor: LABOR-* (GraphBolt's importance_sampling), this many "
                  "rounds that raise the probability of neighbors shared by many nodes and "
                  "lower the rest's (fewer distinct nodes still, at the same variance); the "
                  "sampled edges carry importance weights that mean aggregations apply. 0: "
                  "LABOR-0; -1: rounds until the expected node count stops falling");
  cmd->add_flag("--temporal", o.temporal,
                "Temporal sampling (PyG's time_attr): each seed, at its node_timestamp, reaches "
                "only neighbors (and edges, with edge_timestamp) no later than it, at every "
                "hop, in training and in evaluation (then sampled). Node classification, "
                "or --task link (needs edge_timestamp): each pair (its negatives too) at its "
                "edge_split_times time, reaching only edges before it (the pair's own not "
                "yet), held-out pairs likewise (a negative without a time takes that of the "
                "positive at its position). Local or partitioned, --sampler neighbor");
  add_enum_option(cmd, "--temporal-strategy", o.temporal_strategy,
                  "--temporal: uniform picks --fanouts of the usable neighbors at random; last "
                  "takes the most recent ones");
  add_enum_option(cmd, "--precision", o.precision,
                  "fp32; bf16 or fp16: dense layers in that type (autocast on the training "
                  "device), sparse aggregation and the loss in float32; fp16 adds dynamic loss "
                  "scaling (steps with inf/NaN gradients are skipped)");
  cmd->add_option("--device", o.device,
                  "Train the model on this device: cpu, cuda or cuda:N (a CUDA build of "
                  "graphloom, see the README); sampling and feature gathering stay on the CPU "
                  "and each batch is copied to the device one step ahead (node classification "
                  "and link prediction)");
  add_enum_option(cmd, "--feature-placement", o.feature_placement,
                  "How input features reach --device: cpu (gathered into each batch, then "
                  "copied), pinned (the matrix registered as pinned host memory, rows read by "
                  "the GPU through zero-copy), device (the whole matrix on the GPU), or auto "
                  "(device when it takes at most half the GPU's free memory, else pinned; cpu on "
                  "the CPU). pinned and device need a local dataset's matrix in memory; compressed "
                  "features (--feature-dtype) go as stored and are decoded on the device");
  cmd->add_option("--device-cache-size", o.device_cache_bytes,
                  "Bytes of input feature rows also kept on --device, the nodes of highest "
                  "out-degree first (a GPU feature cache; its hit rate is logged at the end), "
                  "e.g. 512M; 0 = none (rows as stored: compressed ones take less). Needs a local "
                  "dataset's matrix in memory")
      ->transform(byte_size());
  add_enum_option(cmd, "--graph-placement", o.graph_placement,
                  "Where training batches are sampled: cpu (the C++ sampler, host memory), "
                  "device (the graph copied to --device and sampled there by the tensor-op "
                  "sampler, which returns the same blocks), or pinned (sampled on --device too, "
                  "the per-edge arrays read in place from pinned host memory by zero-copy: "
                  "device memory for the nodes only). pinned and device need a local graph");
  cmd->add_flag("--checkpoint-layers", o.model.checkpoint_layers,
                "Recompute each layer's activations in backward instead of keeping them: less "
                "memory for deep models, one more forward per step");
  cmd->add_option("--hidden", o.model.hidden, "Hidden width (per head for GAT)")->check(positive());
  cmd->add_option("--dropout", o.model.dropout, "Dropout on the input of every hidden layer")
      ->check(in_range(0.0, 1.0));
  cmd->add_option("--input-dropout", o.model.input_dropout,
                  "Dropout on the input features (-1: gcn and gat use --dropout as in their "
                  "papers, sage and mlp none as in DGL's mini-batch example)")
      ->check(in_range(-1.0, 1.0));
  cmd->add_option("--aggregator", o.model.aggregator, "GraphSAGE aggregator: mean, gcn or pool")
      ->check(CLI::IsMember({"mean", "gcn", "pool"}));
  cmd->add_option("--heads", o.model.heads, "GAT attention heads of the hidden layers")
      ->check(positive());
  cmd->add_option("--attention-dropout", o.model.attention_dropout, "GAT attention dropout")
      ->check(in_range(0.0, 1.0));
  cmd->add_option("--batch-size", o.batch_size, "Seed nodes per mini-batch")->check(positive());
  cmd->add_option("--epochs", o.epochs, "Training epochs")->check(positive());
  cmd->add_option("--lr", o.lr, "Adam learning rate");
  cmd->add_option("--weight-decay", o.weight_decay, "Adam weight decay (L2)");
  cmd->add_option("--seed", o.seed, "Random seed (sampling, shuffling, initialisation, dropout)");
  cmd->add_option("--workers", o.num_workers, "Loader workers preparing batches concurrently")
      ->check(positive());
  cmd->add_option("--prefetch", o.prefetch, "Batches prepared ahead of training (>= --workers)")
      ->check(positive());
}

void add_data_parallel_flags(CLI::App* cmd, distributed::DataParallelOptions& flags,
                             train::TrainOptions& o) {
  const HelpGroup group(cmd, "Data-parallel training");
  cmd->add_option("--nproc", flags.nproc,
                  "Start N trainer processes on this machine, each with cores/N threads and a "
                  "1/N share of the training nodes; gradients are averaged over them. Under "
                  "torchrun, srun or mpirun leave it at 1: rank and world come from RANK/"
                  "WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS or OMPI_COMM_WORLD_RANK/_SIZE, and the "
                  "rendezvous from MASTER_ADDR/MASTER_PORT")
      ->check(in_range(1, 1024));
  cmd->add_option("--master-port", flags.master_port,
                  "Rendezvous port of --nproc on 127.0.0.1 (0: a free one)")
      ->check(in_range(0, 65535));
  cmd->add_option("--max-restarts", flags.max_restarts,
                  "With --nproc: failures the job survives. When a trainer dies, all trainers "
                  "start again and resume from --checkpoint (keep one with --checkpoint-every)")
      ->check(non_negative());
  cmd->add_option("--dist-timeout", flags.timeout_seconds,
                  "Seconds to wait for the other ranks at the rendezvous and at every collective "
                  "before failing (a rank that exits is noticed at once)")
      ->check(positive());
  cmd->add_option("--bucket-cap-mb", o.sync.bucket_cap_mb,
                  "Gradient bytes per allreduce bucket; smaller buckets start communicating "
                  "earlier in backward")
      ->check(positive());
  add_enum_option(cmd, "--dist-backend", o.sync.backend,
                  "What reduces the gradients of --nproc/launch ranks: auto (NCCL when --device "
                  "is a GPU, as DDP does; Gloo on the CPU), nccl (GPU ranks, the CUDA build), or "
                  "gloo (a Gloo group of the gradients' own; on GPUs it copies through the host)");
  cmd->add_flag(
      "--no-overlap", [&o](int64_t) { o.sync.overlap = false; },
      "Allreduce all gradients after backward instead of during it (to measure the overlap)");
  cmd->add_option("--check-sync", o.check_sync_every,
                  "Every K steps verify that all ranks hold identical parameters (0 = never)")
      ->check(non_negative());
  cmd->add_flag("--drop-uneven-inputs", o.drop_uneven_inputs,
                "Every rank runs as many batches as the rank with the fewest (otherwise ranks "
                "that run out shadow the others' steps until all are done)");
}

void add_train_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto command = std::make_shared<TrainCommand>();
  command->parallel.argv = argv;
  train::TrainOptions& o = command->job.options;
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a GNN for node classification (no --data: the embedded default dataset)");
  add_data_flag(cmd, command->job.data);
  add_train_flags(cmd, o);
  cmd->add_option("--patience", o.patience,
                  "Early stopping: epochs without a better validation accuracy (0 = off)");
  add_enum_option(cmd, "--eval", o.eval,
                  "Validation and test: 'full' (layer-wise full-neighbor inference over all "
                  "nodes) or 'sampled' (mini-batches with the training fanouts)");
  cmd->add_option("--eval-every", o.eval_every, "Validate every N epochs (the last one always)");
  cmd->add_option("--eval-batch-size", o.eval_batch_size, "Nodes per batch of layer-wise inference")
      ->check(positive());
  add_enum_option(cmd, "--normalize-features", o.normalize_features,
                  "'row': divide each feature row by its sum (as the GCN and GAT papers do)");
  add_enum_option(cmd, "--feature-storage", o.feature_storage,
                  "Where --data's 'feat' rows are read from: memory, mmap (the page cache), "
                  "disk (read from the file on each gather with io_uring and O_DIRECT, for "
                  "features larger than memory; --cache-policy and --cache-size put a cache of "
                  "hot rows in front), or auto (memory for one trainer per machine, else mmap)");
  add_enum_option(cmd, "--self-loops", o.self_loops,
                  "'add' a self-loop per node, 'keep' the graph, or 'auto' (add for gcn and gat)");
  cmd->add_option("--checkpoint", o.checkpoint,
                  "Checkpoint file, written after every epoch (atomically: a crash leaves the "
                  "previous one)");
  cmd->add_option("--checkpoint-every", o.checkpoint_every,
                  "Also checkpoint every N optimizer steps, so that a restart (--max-restarts, "
                  "--resume) loses at most N steps (0 = after epochs only)")
      ->check(non_negative());
  add_enum_option(cmd, "--on-checkpoint-failure", o.on_checkpoint_failure,
                  "A checkpoint that cannot be written (full disk, I/O error): 'warn' and train "
                  "on (the previous checkpoint is kept, the next one retries), or 'stop' (exit 1)");
  cmd->add_flag("--resume", o.resume, "Continue from --checkpoint where the last run stopped");
  cmd->add_option("--metrics-log", o.metrics_log, "Per-epoch metrics as JSON lines");
  cmd->add_option("--result-json", command->result_json,
                  "The final figures printed at the end (scores, throughput, time per stage), "
                  "also as a JSON file, for scripts");
  cmd->add_flag("--no-progress", command->no_progress, "No progress bar");
  cmd->add_option("--max-batches", o.max_batches,
                  "Stop every epoch after this many batches per trainer (quick runs, "
                  "measurements; 0 = whole epochs)")
      ->check(non_negative());
  cmd->add_flag(
      "--no-test", [&o](int64_t) { o.final_test = false; },
      "Skip the final evaluation on the test split");
  cmd->add_option("--edge-type-fanout", command->job.edge_type_fanouts,
                  "Typed graphs: EDGE_TYPE=F1,F2,... picks per layer for one edge type (a "
                  "relation name or src:relation:dst), overriding --fanouts, which otherwise "
                  "applies to every edge type; repeat for several types");
  add_data_parallel_flags(cmd, command->parallel, command->job.options);
  add_partitioned_flags(cmd, *command);
  const HelpGroup link_group(cmd, "Link prediction");
  add_enum_option(cmd, "--task", command->job.task,
                  "node: node classification; link: link prediction on the dataset's edge "
                  "splits (lp_* imports, or convert --link-split)");
  add_link_flags(cmd, command->job.link);
  cmd->callback([command] {
    command->parallel.token_file = command->job.cluster.token_file;  // the rendezvous checks it too
    exit_if_failed(distributed::run_data_parallel(
        command->parallel, [&](distributed::ProcessGroup* group) { run_train(*command, group); }));
  });
}

void add_plot_command(CLI::App& app) {
  auto log = std::make_shared<std::string>();
  auto svg = std::make_shared<std::string>("curves.svg");
  CLI::App* plot = app.add_subcommand("plot", "Draw the training curves of a --metrics-log as SVG");
  plot->add_option("log", *log, "Metrics log written by `graphloom train --metrics-log`")
      ->required();
  plot->add_option("-o,--output", *svg, "SVG file to write");
  plot->callback([log, svg] {
    train::plot_metrics(*log, *svg);
    fmt::print("wrote {}\n", *svg);
  });
}

}  // namespace graphloom::cli
