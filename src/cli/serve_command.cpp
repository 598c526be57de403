// `graphloom serve`: the flags of the graph servers of one machine for one part; what they run
// (one server, or S supervised processes: a main server and S-1 backups) is the distributed
// runtime's (distributed/runtime/server_supervisor.h).
#include <memory>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/distributed/runtime/server_supervisor.h"

namespace graphloom::cli {
namespace {

struct ServeCommand {
  distributed::ServeJob job;
  double max_message_mb = 64;
  double max_request_mb = 256;
  std::string feature_storage = "memory";
};

void run_serve(ServeCommand& command) {
  command.job.server.features_on_disk = command.feature_storage == "disk";
  command.job.server.max_message_bytes = static_cast<int64_t>(command.max_message_mb * (1 << 20));
  command.job.server.max_request_bytes = static_cast<int64_t>(command.max_request_mb * (1 << 20));
  exit_if_failed(distributed::run_serve_job(command.job));
}

}  // namespace

void add_serve_command(CLI::App& app, const std::vector<std::string>& argv) {
  auto command = std::make_shared<ServeCommand>();
  command->job.argv = argv;
  distributed::ServerOptions& o = command->job.server;
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve one part of a partitioned graph over gRPC (sampling, feature pulls)");
  cmd->add_option("--part-config", o.partition_dir,
                  "Partition directory written by `graphloom partition` (or its partition.json)")
      ->required();
  cmd->add_option("--part", o.part, "The part to serve")->required()->default_str("");
  cmd->add_option("--address", o.address,
                  "HOST:PORT to listen on; only this address is bound. Backup servers use the "
                  "following ports (PORT 0: any free port each)");
  cmd->add_option("--num-servers", command->job.num_servers,
                  "Servers for this part on this machine: one main server loads it into shared "
                  "memory, the others map the same memory")
      ->check(in_range(1, 64));
  cmd->add_option("--max-restarts", command->job.max_restarts,
                  "With --num-servers: server processes restarted when they die, each alone "
                  "while the others serve (a restarted main server maps the shared memory "
                  "again)")
      ->check(non_negative());
  cmd->add_option("--cluster-id", o.cluster_id,
                  "Names the shared-memory segments; stale ones of the same id and part are "
                  "removed at start");
  cmd->add_option("--token-file", command->job.token_file,
                  "File holding the cluster token (mode 600); or set GRAPHLOOM_TOKEN");
  cmd->add_flag("--insecure", o.insecure, "Serve without a token (local tests only)");
  cmd->add_option("--tls-cert", o.tls_cert, "PEM certificate of this server (enables TLS)");
  cmd->add_option("--tls-key", o.tls_key, "PEM private key of --tls-cert");
  cmd->add_option("--tls-ca", o.tls_ca,
                  "PEM CA: clients must present a certificate it signed (mutual TLS)");
  cmd->add_option("--max-message-mb", command->max_message_mb,
                  "Largest request or response accepted, in MiB")
      ->check(in_range(1.0, 1024.0));
  cmd->add_option("--max-request-mb", command->max_request_mb,
                  "Most memory one request may make a server allocate for its answer, in MiB: "
                  "sampling and pulls over it (or over --max-message-mb) are refused with "
                  "RESOURCE_EXHAUSTED before anything is allocated")
      ->check(in_range(1.0, 1048576.0));
  cmd->add_option("--feature-storage", command->feature_storage,
                  "Where the part's 'feat' rows are served from: memory (mapped, and shared "
                  "with the machine's backups and trainers in shared memory) or disk (read from "
                  "the part's file on each pull with io_uring and O_DIRECT, for parts whose "
                  "features outgrow memory; every server of the machine reads the file, trainers "
                  "pull)")
      ->check(CLI::IsMember({"memory", "disk"}));
  o.disk_cache.policy = features::CachePolicy::kNone;
  add_enum_option(cmd, "--cache-policy", o.disk_cache.policy,
                  "With --feature-storage disk: a cache of hot rows in front of the reads, per "
                  "server: none, degree (the part's nodes of highest out-degree), or sieve, "
                  "s3-fifo, lru, clock");
  cmd->add_option("--cache-size", o.disk_cache.capacity_bytes, "Bytes of that cache, e.g. 256M")
      ->transform(byte_size());
  add_enum_option(cmd, "--role", o.role, "Internal: set for the supervised servers")->group("");
  cmd->callback([command] { run_serve(*command); });
}

}  // namespace graphloom::cli
