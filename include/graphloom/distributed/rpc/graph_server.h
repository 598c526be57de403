// A graph server: serves one part of a partitioned graph over gRPC (DESIGN.md section 5) —
// neighbor sampling on the part's CSC, pulls and pushes of node-tensor rows, metadata, health
// and shutdown. Every request must carry the cluster token, and every id and size is checked
// against the part's ranges and the server's limits before memory is allocated: a malformed
// request gets INVALID_ARGUMENT, one over a limit RESOURCE_EXHAUSTED, each with a message naming
// the field or limit, and the server keeps serving.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "graphloom/base/enum_names.h"
#include "graphloom/features/cached_feature_source.h"

namespace graphloom::distributed {

// How a server gets its part: from the partition files (standalone), from the files and then
// published in shared memory for the machine (main), or mapped from the main's shared memory
// (backup: no second copy in RAM).
enum class ServerRole { kStandalone, kMain, kBackup };

struct ServerOptions {
  std::filesystem::path partition_dir;  // a `graphloom partition` output directory
  int64_t part = 0;
  std::string address = "127.0.0.1:0";   // host:port to bind (port 0: a free one)
  std::string token;                     // required unless `insecure`
  bool insecure = false;                 // no token check (local tests only)
  int64_t max_message_bytes = 64 << 20;  // requests and responses above this are refused
  // The most memory one request may make the server allocate for its answer (a sampling
  // response's arrays, a pull's rows), computed with overflow-checked arithmetic from the
  // request before anything is allocated; a request over it, or over max_message_bytes, is
  // refused with RESOURCE_EXHAUSTED naming the limit and the value.
  int64_t max_request_bytes = 256 << 20;
  // TLS: PEM files of the server's certificate and key (both or neither); with `tls_ca`,
  // clients must present a certificate signed by it (mutual TLS).
  std::filesystem::path tls_cert, tls_key, tls_ca;
  ServerRole role = ServerRole::kStandalone;
  std::string cluster_id = "default";  // names the shared-memory segments (main, backup)
  std::chrono::milliseconds attach_timeout = std::chrono::seconds(120);  // backup: wait for main
  // Main: a restarted main server maps the segments its predecessor published (the backups and
  // trainers of the machine still map them, run-time tensors included) instead of publishing a
  // fresh copy; it publishes when there are none.
  bool adopt_shared = false;
  // The part's "feat" read from its file on each pull (features::DiskRows: io_uring, O_DIRECT)
  // instead of memory: a part whose features outgrow the machine's memory. A main server then
  // publishes the rest of the part without it, and every server of the machine (and no
  // trainer) reads the file. `disk_cache`: a cache of hot rows in front (policy kNone: none;
  // kStatic: the part's nodes of highest out-degree).
  bool features_on_disk = false;
  features::CacheOptions disk_cache{.policy = features::CachePolicy::kNone};
};

class GraphServer {
 public:
  // Loads the part (memory-mapped) and starts listening; throws graphloom::Error when the part
  // cannot be loaded, the address cannot be bound, or no token was given without `insecure`.
  // A main server that fails records its error for the trainers and backups that wait for
  // its part (SharedPartition::record_failure).
  explicit GraphServer(const ServerOptions& options);
  ~GraphServer();  // shuts down
  GraphServer(const GraphServer&) = delete;
  GraphServer& operator=(const GraphServer&) = delete;

  int port() const;
  std::string address() const;  // host:port actually bound
  // Blocks until shutdown() or a Shutdown RPC.
  void wait();
  void shutdown();

 private:
  static void check_options(const ServerOptions& options);
  void start(const ServerOptions& options);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The contents of a PEM file, with the file named in errors.
std::string read_pem_file(const std::filesystem::path& path, const char* what);

// Reads a cluster token file: the first line, surrounding whitespace removed; throws when the
// file is missing, empty, or readable by others than its owner.
std::string read_token_file(const std::filesystem::path& path);
// The cluster token of a server or trainer: read from `token_file` when one is given, else
// the GRAPHLOOM_TOKEN environment variable, else "" (none).
std::string cluster_token(const std::filesystem::path& token_file);

}  // namespace graphloom::distributed

namespace graphloom {
template <>
struct EnumNames<distributed::ServerRole> {
  static constexpr std::array<std::pair<std::string_view, distributed::ServerRole>, 3> kNames{
      {{"standalone", distributed::ServerRole::kStandalone},
       {"main", distributed::ServerRole::kMain},
       {"backup", distributed::ServerRole::kBackup}}};
};
}  // namespace graphloom
