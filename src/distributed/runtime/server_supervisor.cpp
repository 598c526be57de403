// The graph servers of one machine for one part: serving until told to stop, and supervising
// a main server and its backups.
#include "graphloom/distributed/runtime/server_supervisor.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "graphloom/base/error.h"
#include "graphloom/base/system.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/distributed/runtime/process_environment.h"
#include "graphloom/distributed/runtime/process_launcher.h"

namespace graphloom::distributed {
namespace {

volatile sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int signal) { g_stop_signal = signal; }

}  // namespace

void serve_until_stopped(const ServerOptions& options) {
  // Every Pull and SampleNeighbors response is a fresh multi-MB tensor. With glibc's defaults
  // the gRPC threads' arenas handed those pages back (MADV_DONTNEED) and faulted them in again:
  // ~38k page faults and twice the server's CPU time per 8 s of two-machine training.
  // Blocks up to twice a client's 4 MB chunk are kept; larger ones come only from requests
  // far above what graphloom's clients send, and go back to the kernel when freed. Kept pages
  // go back once the server is idle (the graph service's memory trimmer), which glibc can do
  // for its main heap only: the tops of per-thread arenas stay resident after malloc_trim (an
  // abuse burst left 8-42 MB of them, 130 MB -> 138-190 MB). So all threads share one heap.
  keep_freed_heap_pages(8 << 20);
  limit_malloc_arenas(1);
  GraphServer server(options);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  std::atomic<bool> stopped{false};
  std::thread watcher([&] {
    while (!stopped && g_stop_signal == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (g_stop_signal != 0) {
      spdlog::info("part {}: {} received, shutting down", options.part, ::strsignal(g_stop_signal));
      server.shutdown();
    }
  });
  server.wait();
  stopped = true;
  watcher.join();
}

namespace {

std::string address_with_port(const std::string& address, int offset) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    throw OptionError("address", fmt::format("must be HOST:PORT, got '{}'", address));
  }
  const int port = std::atoi(address.c_str() + colon + 1);
  return address.substr(0, colon + 1) + std::to_string(port == 0 ? 0 : port + offset);
}

}  // namespace

int supervise_servers(const SupervisedServers& supervised) {
  std::vector<ProcessSpec> servers;
  for (int i = 0; i < supervised.num_servers; ++i) {
    std::vector<std::string> server_argv =
        argv_without(supervised.argv, {"--num-servers", "--address", "--role", "--max-restarts"});
    const std::string role(name_of(i == 0 ? ServerRole::kMain : ServerRole::kBackup));
    server_argv.insert(server_argv.end(),
                       {"--role", role, "--address", address_with_port(supervised.address, i)});
    servers.push_back({.name = fmt::format("{} server {} of part {}", role, i, supervised.part),
                       .argv = server_argv});
  }
  // The last one out: a server killed by a signal could not remove what it published or mapped.
  const auto remove_segments = [&] {
    if (const int removed =
            SharedPartition::remove_segments(supervised.cluster_id, supervised.part)) {
      spdlog::info("part {}: removed {} shared-memory segment(s) left by its servers",
                   supervised.part, removed);
    }
  };
  const int code = run_processes(
      std::move(servers),
      {.max_restarts = supervised.max_restarts, .guard = true, .before_restart = remove_segments});
  remove_segments();
  return code;
}

int run_serve_job(const ServeJob& job) {
  ServerOptions options = job.server;
  options.token = cluster_token(job.token_file);
  options.adopt_shared = process_environment().restart_count > 0;
  if (options.role == ServerRole::kStandalone && job.num_servers > 1) {
    return supervise_servers({.argv = job.argv,
                              .address = options.address,
                              .num_servers = job.num_servers,
                              .part = options.part,
                              .cluster_id = options.cluster_id,
                              .max_restarts = job.max_restarts});
  }
  if (options.role == ServerRole::kStandalone) options.role = ServerRole::kMain;
  serve_until_stopped(options);
  return 0;
}

}  // namespace graphloom::distributed
