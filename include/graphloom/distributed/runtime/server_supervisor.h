// The graph servers of one machine for one part: a server that runs until SIGINT/SIGTERM or a
// Shutdown RPC, and the supervisor of a main server and its backups (`serve --num-servers`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphloom/distributed/rpc/graph_server.h"

namespace graphloom::distributed {

// Serves until SIGINT/SIGTERM or a Shutdown RPC; the server's destructor removes the shared
// memory segments on every one of those paths.
void serve_until_stopped(const ServerOptions& options);

// Restarts this program's `argv` (a `serve` command line) once per server with --role main
// (server 0: loads the part into shared memory) or backup (maps it), server i on the port of
// `address` + i (port 0: any free port each), and supervises them: all stop together. Returns
// the first failure's exit code (0: all stopped cleanly).
int supervise_servers(const std::vector<std::string>& argv, const std::string& address,
                      int num_servers, int64_t part);

}  // namespace graphloom::distributed
