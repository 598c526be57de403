// The data-parallel side of `train` and `bench train`: the flags, `--nproc` (this program
// started once per trainer), and joining the process group when a launcher set RANK/WORLD_SIZE.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <random>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/error.h"
#include "graphloom/base/logging.h"
#include "graphloom/dist/graph_server.h"
#include "graphloom/dist/process_environment.h"
#include "graphloom/dist/process_launcher.h"

namespace graphloom::cli {
namespace {

constexpr const char* kRendezvousTokenVariable = "GRAPHLOOM_RENDEZVOUS_TOKEN";

// The rendezvous token: GRAPHLOOM_RENDEZVOUS_TOKEN (set by --nproc for its trainers), else the
// cluster token (--token-file, GRAPHLOOM_TOKEN); none when neither is given.
std::optional<std::string> rendezvous_token(const std::string& token_file) {
  if (const char* token = std::getenv(kRendezvousTokenVariable); token != nullptr && *token) {
    return std::string(token);
  }
  const std::string cluster = dist::cluster_token(token_file);
  return cluster.empty() ? std::nullopt : std::optional<std::string>(cluster);
}

std::string random_token() {
  std::random_device device;
  return fmt::format("{:016x}{:016x}", (uint64_t{device()} << 32) | device(),
                     (uint64_t{device()} << 32) | device());
}

// `--nproc N`: N local trainers (like torch's mp.spawn) sharing the cores, rendezvous on
// 127.0.0.1. Returns the first failure's exit code.
int launch_local_trainers(const DataParallelFlags& flags) {
  if (dist::process_environment().distributed()) {
    throw UsageError(
        "--nproc starts its own trainers; do not combine it with a launcher that "
        "already sets RANK/WORLD_SIZE (torchrun, srun, mpirun)");
  }
  const int port = flags.master_port > 0 ? flags.master_port : dist::find_free_port();
  // A token of this job's own for its rendezvous, handed to the trainers in their environment
  // (not on the command line, where every local user could read it).
  const std::string token = rendezvous_token(flags.token_file).value_or(random_token());
  std::vector<dist::ProcessSpec> trainers;
  for (int rank = 0; rank < flags.nproc; ++rank) {
    trainers.push_back({.name = fmt::format("trainer rank {}", rank),
                        .argv = rewritten_argv(flags.argv, {"--nproc"}),
                        .environment = dist::launch_variables({.rank = rank,
                                                               .world_size = flags.nproc,
                                                               .local_rank = rank,
                                                               .local_world_size = flags.nproc,
                                                               .master_addr = "127.0.0.1",
                                                               .master_port = port})});
    trainers.back().environment[kRendezvousTokenVariable] = token;
  }
  spdlog::info("starting {} trainers ({} threads each, rendezvous 127.0.0.1:{})", flags.nproc,
               trainers[0].environment.at("OMP_NUM_THREADS"), port);
  return dist::run_processes(trainers);
}

}  // namespace

std::vector<std::string> rewritten_argv(const std::vector<std::string>& argv,
                                        const std::vector<std::string>& drop) {
  std::vector<std::string> out{"/proc/self/exe"};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    const bool dropped = std::any_of(drop.begin(), drop.end(), [&](const std::string& flag) {
      if (arg == flag) {
        ++i;  // and its value
        return true;
      }
      return arg.rfind(flag + "=", 0) == 0;
    });
    if (!dropped) out.push_back(arg);
  }
  return out;
}

void add_data_parallel_flags(CLI::App* cmd, DataParallelFlags& flags, train::TrainOptions& o) {
  const char* group = "Data-parallel training";
  cmd->add_option("--nproc", flags.nproc,
                  "Start N trainer processes on this machine, each with cores/N threads and a "
                  "1/N share of the training nodes; gradients are averaged over them. Under "
                  "torchrun, srun or mpirun leave it at 1: rank and world come from RANK/"
                  "WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS or OMPI_COMM_WORLD_RANK/_SIZE, and the "
                  "rendezvous from MASTER_ADDR/MASTER_PORT")
      ->check(in_range(1, 1024))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--master-port", flags.master_port,
                  "Rendezvous port of --nproc on 127.0.0.1 (0: a free one)")
      ->check(in_range(0, 65535))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--dist-timeout", flags.timeout_seconds,
                  "Seconds to wait for the other ranks at the rendezvous and at every collective "
                  "before failing (a rank that exits is noticed at once)")
      ->check(positive())
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--bucket-cap-mb", o.sync.bucket_cap_mb,
                  "Gradient bytes per allreduce bucket; smaller buckets start communicating "
                  "earlier in backward")
      ->check(positive())
      ->capture_default_str()
      ->group(group);
  cmd->add_flag(
         "--no-overlap", [&o](int64_t) { o.sync.overlap = false; },
         "Allreduce all gradients after backward instead of during it (to measure the overlap)")
      ->group(group);
  cmd->add_option("--check-sync", o.check_sync_every,
                  "Every K steps verify that all ranks hold identical parameters (0 = never)")
      ->check(non_negative())
      ->capture_default_str()
      ->group(group);
  cmd->add_flag("--drop-uneven-inputs", o.drop_uneven_inputs,
                "Every rank runs as many batches as the rank with the fewest (otherwise ranks "
                "that run out shadow the others' steps until all are done)")
      ->group(group);
}

void run_data_parallel(const DataParallelFlags& flags,
                       const std::function<void(dist::ProcessGroup*)>& job) {
  if (flags.nproc > 1) {
    const int code = launch_local_trainers(flags);
    if (code != 0) throw ExitCode{code};
    return;
  }
  const dist::ProcessEnvironment env = dist::process_environment();
  if (!env.distributed()) return job(nullptr);
  set_log_tag(fmt::format("rank {}", env.rank));
  // Rank 0 reports progress; the others only warnings and errors.
  if (env.rank != 0 && spdlog::get_level() == spdlog::level::info) {
    spdlog::set_level(spdlog::level::warn);
  }
  const auto group = dist::ProcessGroup::connect(
      env,
      {.timeout = std::chrono::milliseconds(static_cast<int64_t>(flags.timeout_seconds * 1000)),
       .token = rendezvous_token(flags.token_file).value_or("")});
  job(group.get());
}

}  // namespace graphloom::cli
