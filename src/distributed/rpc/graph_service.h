// The graph service over one part (internal to the dist module): the handlers behind a
// GraphServer, with the part loaded as `options.role` says.
#pragma once

#include <grpcpp/impl/service_type.h>

#include <functional>
#include <memory>

#include "graphloom/distributed/rpc/graph_server.h"

namespace graphloom::distributed {

// Loads the part and returns the service; `request_shutdown` is called on a Shutdown RPC.
std::unique_ptr<grpc::Service> make_graph_service(const ServerOptions& options,
                                                  std::function<void()> request_shutdown);

}  // namespace graphloom::distributed
