// `graphloom serve`: the graph servers of one machine for one part. With --num-servers S the
// command supervises S processes: the main server (loads the part into shared memory) and S-1
// backups (map the same memory), each on its own port, stopped together.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/error.h"
#include "graphloom/base/system.h"
#include "graphloom/dist/graph_server.h"
#include "graphloom/dist/process_launcher.h"

namespace graphloom::cli {
namespace {

struct ServeCommand {
  dist::ServerOptions server;
  std::string token_file;
  int num_servers = 1;
  std::string role = "auto";  // internal: main | backup (set for the supervised processes)
  double max_message_mb = 64;
  std::vector<std::string> argv;
};

volatile sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int signal) { g_stop_signal = signal; }

// Serves until SIGINT/SIGTERM or a Shutdown RPC; the server's destructor removes the shared
// memory segments on every one of those paths.
void serve_until_stopped(const dist::ServerOptions& options) {
  // Every Pull and SampleNeighbors response is a fresh multi-MB tensor. With glibc's defaults
  // the gRPC threads' arenas handed those pages back (MADV_DONTNEED) and faulted them in again:
  // ~38k page faults and twice the server's CPU time per 8 s of two-machine training.
  keep_freed_heap_pages();
  dist::GraphServer server(options);
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

std::string address_with_port(const std::string& address, int offset) {
  const auto colon = address.rfind(':');
  GL_CHECK(colon != std::string::npos, "--address '{}' must be HOST:PORT", address);
  const int port = std::atoi(address.c_str() + colon + 1);
  return address.substr(0, colon + 1) + std::to_string(port == 0 ? 0 : port + offset);
}

void run_serve(ServeCommand& command) {
  dist::ServerOptions options = command.server;
  options.max_message_bytes = static_cast<int64_t>(command.max_message_mb * (1 << 20));
  options.token = dist::cluster_token(command.token_file);
  if (command.role == "main" || command.role == "backup") {
    options.role = command.role == "main" ? dist::ServerRole::kMain : dist::ServerRole::kBackup;
    return serve_until_stopped(options);
  }
  if (command.num_servers == 1) {
    options.role = dist::ServerRole::kMain;  // trainers of this machine map the part too
    return serve_until_stopped(options);
  }
  std::vector<dist::ProcessSpec> servers;
  for (int i = 0; i < command.num_servers; ++i) {
    std::vector<std::string> argv =
        rewritten_argv(command.argv, {"--num-servers", "--address", "--role"});
    argv.insert(argv.end(), {"--role", i == 0 ? "main" : "backup", "--address",
                             address_with_port(options.address, i)});
    servers.push_back({.name = fmt::format("{} server {} of part {}", i == 0 ? "main" : "backup", i,
                                           options.part),
                       .argv = argv});
  }
  const int code = dist::run_processes(servers);
  if (code != 0) throw ExitCode{code};
}

}  // namespace

void add_serve_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto command = std::make_shared<ServeCommand>();
  command->argv = argv;
  dist::ServerOptions& o = command->server;
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve one part of a partitioned graph over gRPC (sampling, feature pulls)");
  cmd->add_option("--part-config", o.partition_dir,
                  "Partition directory written by `graphloom partition` (or its partition.json)")
      ->required();
  cmd->add_option("--part", o.part, "The part to serve")->required();
  cmd->add_option("--address", o.address,
                  "HOST:PORT to listen on; only this address is bound. Backup servers use the "
                  "following ports (PORT 0: any free port each)")
      ->capture_default_str();
  cmd->add_option("--num-servers", command->num_servers,
                  "Servers for this part on this machine: one main server loads it into shared "
                  "memory, the others map the same memory")
      ->check(in_range(1, 64))
      ->capture_default_str();
  cmd->add_option("--cluster-id", o.cluster_id,
                  "Names the shared-memory segments; stale ones of the same id and part are "
                  "removed at start")
      ->capture_default_str();
  cmd->add_option("--token-file", command->token_file,
                  "File holding the cluster token (mode 600); or set GRAPHLOOM_TOKEN");
  cmd->add_flag("--insecure", o.insecure, "Serve without a token (local tests only)");
  cmd->add_option("--tls-cert", o.tls_cert, "PEM certificate of this server (enables TLS)");
  cmd->add_option("--tls-key", o.tls_key, "PEM private key of --tls-cert");
  cmd->add_option("--tls-ca", o.tls_ca,
                  "PEM CA: clients must present a certificate it signed (mutual TLS)");
  cmd->add_option("--max-message-mb", command->max_message_mb,
                  "Largest request or response accepted, in MiB")
      ->check(in_range(1.0, 1024.0))
      ->capture_default_str();
  cmd->add_option("--role", command->role, "Internal: set for the supervised servers")
      ->check(CLI::IsMember({"auto", "main", "backup"}))
      ->group("");
  cmd->callback([command] { run_serve(*command); });
}

}  // namespace graphloom::cli
