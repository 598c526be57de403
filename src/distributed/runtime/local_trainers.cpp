// --nproc's local trainers, joining a launched job's process group, and the choice between them.
#include "graphloom/distributed/runtime/local_trainers.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <optional>

#include "graphloom/base/error.h"
#include "graphloom/base/logging.h"
#include "graphloom/base/random.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/distributed/runtime/process_environment.h"
#include "graphloom/distributed/runtime/process_launcher.h"

namespace graphloom::distributed {
namespace {

constexpr const char* kRendezvousTokenVariable = "GRAPHLOOM_RENDEZVOUS_TOKEN";

// The rendezvous token: GRAPHLOOM_RENDEZVOUS_TOKEN (set by --nproc for its trainers), else the
// cluster token (--token-file, GRAPHLOOM_TOKEN); none when neither is given.
std::optional<std::string> rendezvous_token(const std::string& token_file) {
  if (const char* token = std::getenv(kRendezvousTokenVariable); token != nullptr && *token) {
    return std::string(token);
  }
  const std::string cluster = cluster_token(token_file);
  return cluster.empty() ? std::nullopt : std::optional<std::string>(cluster);
}

}  // namespace

// Rendezvous on 127.0.0.1; the trainers share the cores.
int run_local_trainers(const DataParallelOptions& options) {
  if (process_environment().distributed()) {
    throw OptionError("nproc",
                      "starts its own trainers; do not combine it with a launcher that "
                      "already sets RANK/WORLD_SIZE (torchrun, srun, mpirun)");
  }
  const int port = options.master_port > 0 ? options.master_port : find_free_port();
  // A token of this job's own for its rendezvous, handed to the trainers in their environment
  // (not on the command line, where every local user could read it).
  const std::string token = rendezvous_token(options.token_file).value_or(random_token());
  std::vector<ProcessSpec> trainers;
  for (int rank = 0; rank < options.nproc; ++rank) {
    trainers.push_back({.name = fmt::format("trainer rank {}", rank),
                        .argv = argv_without(options.argv, {"--nproc", "--max-restarts"}),
                        .environment = launch_variables({.rank = rank,
                                                         .world_size = options.nproc,
                                                         .local_rank = rank,
                                                         .local_world_size = options.nproc,
                                                         .master_addr = "127.0.0.1",
                                                         .master_port = port}),
                        .in_process_group = true});
    trainers.back().environment[kRendezvousTokenVariable] = token;
  }
  spdlog::info("starting {} trainers ({} threads each, rendezvous 127.0.0.1:{})", options.nproc,
               trainers[0].environment.at("OMP_NUM_THREADS"), port);
  // A restart rendezvouses on the same port: the old store went down with the old rank 0.
  return run_processes(std::move(trainers), {.max_restarts = options.max_restarts, .guard = true});
}

std::unique_ptr<ProcessGroup> join_launched_job(double timeout_seconds,
                                                const std::string& token_file) {
  const ProcessEnvironment env = process_environment();
  if (!env.distributed()) return nullptr;
  set_log_tag(fmt::format("rank {}", env.rank));
  // Rank 0 reports progress; the others only warnings and errors.
  if (env.rank != 0 && spdlog::get_level() == spdlog::level::info) {
    spdlog::set_level(spdlog::level::warn);
  }
  return ProcessGroup::connect(
      env, {.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)),
            .token = rendezvous_token(token_file).value_or("")});
}

int run_data_parallel(const DataParallelOptions& options,
                      const std::function<void(ProcessGroup*)>& job) {
  if (options.nproc > 1) return run_local_trainers(options);
  const auto group = join_launched_job(options.timeout_seconds, options.token_file);
  job(group.get());
  return 0;
}

}  // namespace graphloom::distributed
