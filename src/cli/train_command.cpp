// `graphloom train`: node classification on a dataset directory, or with no --data on the
// embedded default dataset (the main job). `graphloom plot LOG -o SVG`: its training curves.
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <thread>

#include "commands.h"
#include "graphloom/base/error.h"
#include "graphloom/base/logging.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/dist/process_environment.h"
#include "graphloom/dist/process_group.h"
#include "graphloom/dist/process_launcher.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/generators.h"
#include "graphloom/train/metrics_log.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::cli {
namespace {

struct TrainCommand {
  std::string data;
  train::TrainOptions options;
  bool no_progress = false;
  int nproc = 1;
  int master_port = 0;
  double dist_timeout = 120;
  std::vector<std::string> argv;  // the command line, to start --nproc copies of it
};

// The command line of one of --nproc's trainers: the same, without --nproc.
std::vector<std::string> trainer_argv(const std::vector<std::string>& argv) {
  std::vector<std::string> out{"/proc/self/exe"};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--nproc") {
      ++i;  // and its value
    } else if (argv[i].rfind("--nproc=", 0) != 0) {
      out.push_back(argv[i]);
    }
  }
  return out;
}

// `--nproc N`: N local trainers (like torch's mp.spawn) sharing the cores, rendezvous on
// 127.0.0.1. Returns the first failure's exit code.
int launch_local_trainers(const TrainCommand& command) {
  if (dist::process_environment().distributed()) {
    throw UsageError(
        "--nproc starts its own trainers; do not combine it with a launcher that "
        "already sets RANK/WORLD_SIZE (torchrun, srun, mpirun)");
  }
  const int port = command.master_port > 0 ? command.master_port : dist::find_free_port();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int threads = std::max(1, static_cast<int>(cores) / command.nproc);
  std::vector<dist::ProcessSpec> trainers;
  for (int rank = 0; rank < command.nproc; ++rank) {
    trainers.push_back({.name = fmt::format("trainer rank {}", rank),
                        .argv = trainer_argv(command.argv),
                        .environment = {{"RANK", std::to_string(rank)},
                                        {"LOCAL_RANK", std::to_string(rank)},
                                        {"WORLD_SIZE", std::to_string(command.nproc)},
                                        {"LOCAL_WORLD_SIZE", std::to_string(command.nproc)},
                                        {"MASTER_ADDR", "127.0.0.1"},
                                        {"MASTER_PORT", std::to_string(port)},
                                        {"OMP_NUM_THREADS", std::to_string(threads)}}});
  }
  spdlog::info("starting {} trainers ({} threads each, rendezvous 127.0.0.1:{})", command.nproc,
               threads, port);
  return dist::run_processes(trainers);
}

void run_train(TrainCommand& command) {
  if (command.nproc > 1) {
    const int code = launch_local_trainers(command);
    if (code != 0) throw ExitCode(code);
    return;
  }
  const dist::ProcessEnvironment env = dist::process_environment();
  std::unique_ptr<dist::ProcessGroup> group;
  if (env.distributed()) {
    set_log_tag(fmt::format("rank {}", env.rank));
    // Rank 0 reports progress; the others only warnings and errors.
    if (env.rank != 0 && spdlog::get_level() == spdlog::level::info) {
      spdlog::set_level(spdlog::level::warn);
    }
    group = dist::ProcessGroup::connect(
        env,
        {.timeout = std::chrono::milliseconds(static_cast<int64_t>(command.dist_timeout * 1000))});
  }
  const bool main_rank = env.rank == 0;
  configure_allocator();  // mini-batch buffers come and go every step
  Timer timer;
  io::Dataset dataset;
  if (command.data.empty()) {
    spdlog::info("no --data: generating the embedded default dataset (planted partition)");
    dataset = io::generate_planted({});
  } else {
    dataset = io::load_dataset(command.data);
  }
  spdlog::info("dataset '{}': {} nodes, {} edges, {} classes ({:.1f} s)", dataset.name,
               dataset.num_nodes(), dataset.graph.num_edges(), dataset.num_classes,
               timer.seconds());
  command.options.progress = !command.no_progress;
  const train::TrainResult result =
      train::train_node_classification(dataset, command.options, group.get());
  if (!main_rank) return;
  fmt::print("model {}  epochs {}  best epoch {}  {:.0f} seeds/s\n", command.options.model.kind,
             result.epochs_run, result.best_epoch + 1, result.seeds_per_second);
  fmt::print("validation accuracy {:.4f}\n", result.best_val_acc);
  fmt::print("test accuracy {:.4f}  test macro-F1 {:.4f}\n", result.test_acc, result.test_f1);
  if (group) {
    fmt::print("data-parallel: {} ranks, gradient allreduce not hidden by backward {:.2f} s\n",
               group->world_size(), result.times.allreduce);
  }
  fmt::print("total time {:.1f} s\n", timer.seconds());
}

}  // namespace

void add_train_flags(CLI::App* cmd, train::TrainOptions& o) {
  cmd->add_option("--model", o.model.kind, "Model: sage, gcn, gat or mlp (features only)")
      ->check(CLI::IsMember({"sage", "gcn", "gat", "mlp"}))
      ->capture_default_str();
  cmd->add_option("--fanouts", o.fanouts,
                  "Neighbors sampled per layer, input layer first (-1 = all); their count is "
                  "the number of layers")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--hidden", o.model.hidden, "Hidden width (per head for GAT)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--dropout", o.model.dropout, "Dropout on the input of every hidden layer")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--input-dropout", o.model.input_dropout,
                  "Dropout on the input features (-1: gcn and gat use --dropout as in their "
                  "papers, sage and mlp none as in DGL's mini-batch example)")
      ->check(CLI::Range(-1.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--aggregator", o.model.aggregator, "GraphSAGE aggregator: mean, gcn or pool")
      ->check(CLI::IsMember({"mean", "gcn", "pool"}))
      ->capture_default_str();
  cmd->add_option("--heads", o.model.heads, "GAT attention heads of the hidden layers")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--attention-dropout", o.model.attention_dropout, "GAT attention dropout")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--batch-size", o.batch_size, "Seed nodes per mini-batch")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "Training epochs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--lr", o.lr, "Adam learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "Adam weight decay (L2)")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Random seed (sampling, shuffling, initialisation, dropout)")
      ->capture_default_str();
  cmd->add_option("--workers", o.num_workers, "Loader workers preparing batches concurrently")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--prefetch", o.prefetch, "Batches prepared ahead of training (>= --workers)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

void add_data_parallel_flags(CLI::App* cmd, TrainCommand& command) {
  train::TrainOptions& o = command.options;
  const char* group = "Data-parallel training";
  cmd->add_option("--nproc", command.nproc,
                  "Start N trainer processes on this machine, each with cores/N threads and a "
                  "1/N share of the training nodes; gradients are averaged over them. Under "
                  "torchrun, srun or mpirun leave it at 1: rank and world come from RANK/"
                  "WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS or OMPI_COMM_WORLD_RANK/_SIZE, and the "
                  "rendezvous from MASTER_ADDR/MASTER_PORT")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--master-port", command.master_port,
                  "Rendezvous port of --nproc on 127.0.0.1 (0: a free one)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--dist-timeout", command.dist_timeout,
                  "Seconds to wait for the other ranks at the rendezvous and at every collective "
                  "before failing (a rank that exits is noticed at once)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--bucket-cap-mb", o.sync.bucket_cap_mb,
                  "Gradient bytes per allreduce bucket; smaller buckets start communicating "
                  "earlier in backward")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group(group);
  cmd->add_flag(
         "--no-overlap", [&o](int64_t) { o.sync.overlap = false; },
         "Allreduce all gradients after backward instead of during it (for measuring "
         "the overlap)")
      ->group(group);
  cmd->add_option("--check-sync", o.check_sync_every,
                  "Every K steps verify that all ranks hold identical parameters (0 = never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group(group);
  cmd->add_flag("--drop-uneven-inputs", o.drop_uneven_inputs,
                "Every rank runs as many batches as the rank with the fewest (otherwise ranks "
                "that run out shadow the others' steps until all are done)")
      ->group(group);
}

void add_train_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto command = std::make_shared<TrainCommand>();
  command->argv = argv;
  train::TrainOptions& o = command->options;
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a GNN for node classification (no --data: the embedded default dataset)");
  cmd->add_option("--data", command->data, "Dataset directory (default: embedded default dataset)");
  add_train_flags(cmd, o);
  cmd->add_option("--patience", o.patience,
                  "Early stopping: epochs without a better validation accuracy (0 = off)")
      ->capture_default_str();
  cmd->add_option("--eval", o.eval,
                  "Validation and test: 'full' (layer-wise full-neighbor inference over all "
                  "nodes) or 'sampled' (mini-batches with the training fanouts)")
      ->check(CLI::IsMember({"full", "sampled"}))
      ->capture_default_str();
  cmd->add_option("--eval-every", o.eval_every, "Validate every N epochs (the last one always)")
      ->capture_default_str();
  cmd->add_option("--eval-batch-size", o.eval_batch_size, "Nodes per batch of layer-wise inference")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--normalize-features", o.normalize_features,
                  "'row': divide each feature row by its sum (as the GCN and GAT papers do)")
      ->check(CLI::IsMember({"none", "row"}))
      ->capture_default_str();
  cmd->add_option("--self-loops", o.self_loops,
                  "'add' a self-loop per node, 'keep' the graph, or 'auto' (add for gcn and gat)")
      ->check(CLI::IsMember({"auto", "add", "keep"}))
      ->capture_default_str();
  cmd->add_option("--checkpoint", o.checkpoint, "Checkpoint file, written after every epoch");
  cmd->add_flag("--resume", o.resume, "Continue from --checkpoint where the last run stopped");
  cmd->add_option("--metrics-log", o.metrics_log, "Per-epoch metrics as JSON lines");
  cmd->add_flag("--no-progress", command->no_progress, "No progress bar");
  add_data_parallel_flags(cmd, *command);
  cmd->callback([command] {
    if (command->options.resume && command->options.checkpoint.empty()) {
      throw UsageError("--resume needs --checkpoint FILE");
    }
    run_train(*command);
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
