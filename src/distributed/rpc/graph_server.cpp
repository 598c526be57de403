// GraphServer: the gRPC server around the graph service of one part — listening address,
// TLS, message limits, and shutdown from a Shutdown RPC.
#include "graphloom/distributed/rpc/graph_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <thread>

#include "graph_service.h"
#include "graphloom/base/error.h"
#include "graphloom/distributed/rpc/shared_partition.h"

namespace graphloom::distributed {

struct GraphServer::Impl {
  std::unique_ptr<grpc::Service> service;
  std::unique_ptr<grpc::Server> server;
  std::string address;
  int port = 0;
  std::once_flag shutdown_once;
  std::thread shutdown_thread;
};

GraphServer::GraphServer(const ServerOptions& options) : impl_(std::make_unique<Impl>()) {
  check_options(options);  // a usage error is no failure of the part's server
  // A failure recorded by an earlier start is not this one's.
  if (options.role == ServerRole::kMain) {
    SharedPartition::clear_failure(options.cluster_id, options.part);
  }
  try {
    start(options);
  } catch (const std::exception& e) {
    if (options.role == ServerRole::kMain) {
      // The machine's trainers and backups wait for this part: they say why at once. The
      // service goes first, with the segments it may have published.
      impl_->service.reset();
      SharedPartition::record_failure(options.cluster_id, options.part, e.what());
    }
    throw;
  }
}

void GraphServer::check_options(const ServerOptions& options) {
  if (!options.insecure && options.token.empty()) {
    throw OptionError("token",
                      "is required: a graph server needs the cluster token (or GRAPHLOOM_TOKEN); "
                      "`insecure` serves without one, for local tests only");
  }
  if (options.max_message_bytes <= 0 || options.max_message_bytes > (1LL << 30)) {
    throw OptionError("max_message_bytes",
                      fmt::format("must be in (0, 1 GiB], got {}", options.max_message_bytes));
  }
  if (options.max_request_bytes < (1 << 20)) {
    throw OptionError("max_request_bytes",
                      fmt::format("must be at least 1 MiB, got {}", options.max_request_bytes));
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    throw OptionError(options.tls_cert.empty() ? "tls_cert" : "tls_key",
                      "is missing: TLS needs both `tls_cert` and `tls_key`");
  }
  if (!options.tls_ca.empty() && options.tls_cert.empty()) {
    throw OptionError("tls_ca", "(client certificates) needs `tls_cert` and `tls_key`");
  }
  if (options.disk_cache.policy != features::CachePolicy::kNone && !options.features_on_disk) {
    throw OptionError("cache_policy",
                      "caches the rows a server reads from disk: it needs "
                      "`feature_storage` disk");
  }
}

void GraphServer::start(const ServerOptions& options) {
  impl_->service = make_graph_service(options, [impl = impl_.get()] {
    // Shutdown waits for running calls, this one included: do it from another thread.
    std::call_once(impl->shutdown_once, [impl] {
      impl->shutdown_thread = std::thread([impl] { impl->server->Shutdown(); });
    });
  });
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!options.tls_cert.empty()) {
    grpc::SslServerCredentialsOptions tls(
        options.tls_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                               : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    tls.pem_key_cert_pairs.push_back({read_pem_file(options.tls_key, "TLS key"),
                                      read_pem_file(options.tls_cert, "TLS certificate")});
    if (!options.tls_ca.empty()) tls.pem_root_certs = read_pem_file(options.tls_ca, "TLS CA");
    credentials = grpc::SslServerCredentials(tls);
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.address, credentials, &impl_->port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(options.max_message_bytes));
  // No SO_REUSEPORT: a second server on a port in use must fail, not share the port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument("grpc.http2.max_frame_size", (1 << 24) - 1);
  builder.AddChannelArgument("grpc.http2.lookahead_bytes", 64 << 20);
  builder.RegisterService(impl_->service.get());
  impl_->server = builder.BuildAndStart();
  GL_CHECK(impl_->server != nullptr && impl_->port > 0,
           "part {}: cannot listen on '{}' (address in use, or not an address of this machine?)",
           options.part, options.address);
  impl_->address =
      options.address.substr(0, options.address.rfind(':')) + ":" + std::to_string(impl_->port);
  spdlog::info("part {} served on {}{}{}", options.part, impl_->address,
               options.tls_cert.empty() ? "" : " (TLS)",
               options.insecure ? " WITHOUT token check (--insecure)" : "");
}

GraphServer::~GraphServer() {
  shutdown();
  if (impl_->shutdown_thread.joinable()) impl_->shutdown_thread.join();
}

int GraphServer::port() const { return impl_->port; }
std::string GraphServer::address() const { return impl_->address; }
void GraphServer::wait() { impl_->server->Wait(); }

void GraphServer::shutdown() {
  std::call_once(impl_->shutdown_once, [this] {
    impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
}

}  // namespace graphloom::distributed
