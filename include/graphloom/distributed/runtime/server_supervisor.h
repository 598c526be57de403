// The graph servers of one machine for one part: a server that runs until SIGINT/SIGTERM or a
// Shutdown RPC, the supervisor of a main server and its backups (`serve --num-servers`), and
// the choice between them (`graphloom serve`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphloom/distributed/rpc/graph_server.h"

namespace graphloom::distributed {

// Serves until SIGINT/SIGTERM or a Shutdown RPC; the server's destructor removes the shared
// memory segments on every one of those paths.
void serve_until_stopped(const ServerOptions& options);

struct SupervisedServers {
  std::vector<std::string> argv;  // this program's `serve` command line
  std::string address;            // HOST:PORT of server 0; server i listens on PORT + i
  int num_servers = 2;
  int64_t part = 0;
  std::string cluster_id;  // of the shared-memory segments
  // Server processes restarted when they die (each alone: the others keep serving). A
  // restarted main server adopts the shared memory (ServerOptions::adopt_shared).
  int max_restarts = 0;
};

// Restarts this program's `argv` once per server with --role main (server 0: loads the part
// into shared memory) or backup (maps it), server i on the port of `address` + i (port 0: any
// free port each), and supervises them until they are told to stop. The part's segments are
// removed afterwards, whoever published them. Returns the exit code of the failure that ended
// it (0: all stopped cleanly).
int supervise_servers(const SupervisedServers& servers);

// What `graphloom serve` runs. With `server.role` kMain or kBackup this process is one that a
// supervisor started, and it serves. With kStandalone (the default) it serves as the main
// server when num_servers is 1 (the machine's trainers then map its part), and otherwise
// supervises num_servers processes. The token comes from token_file, else GRAPHLOOM_TOKEN; a
// restarted process adopts its predecessor's shared memory. Returns as supervise_servers.
struct ServeJob {
  ServerOptions server;
  std::string token_file;
  int num_servers = 1;
  int max_restarts = 0;           // of supervised servers
  std::vector<std::string> argv;  // this program's `serve` command line
};
int run_serve_job(const ServeJob& job);

}  // namespace graphloom::distributed
