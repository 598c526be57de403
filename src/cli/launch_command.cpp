// `graphloom launch`: its flags; the launch itself is the distributed runtime's
// (distributed/runtime/cluster_launch.h).
#include <memory>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/distributed/runtime/cluster_launch.h"

namespace graphloom::cli {

void add_launch_command(CLI::App& app) {
  auto launch = std::make_shared<distributed::ClusterLaunchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "launch",
      "Start servers and trainers on every machine of an ip config: `graphloom launch "
      "--ip-config ip.txt --part-config parts -- graphloom train --epochs 10`");
  cmd->add_option("--ip-config", launch->ip_config,
                  "Machines, one 'ip [port]' per line (DGL's format); part m runs on line m")
      ->required();
  cmd->add_option("--part-config", launch->part_config, "Partition directory (shared path)")
      ->required();
  cmd->add_option("--num-servers", launch->num_servers, "Graph servers per machine")
      ->check(in_range(1, 64));
  cmd->add_option("--num-trainers", launch->num_trainers, "Trainers per machine")
      ->check(in_range(1, 256));
  cmd->add_option("--cluster-id", launch->cluster_id, "Names the shared-memory segments");
  cmd->add_option("--master-port", launch->master_port,
                  "Trainers' rendezvous port on the first machine (0: a free one)");
  cmd->add_option("--token-file", launch->token_file,
                  "Cluster token file (mode 600), passed to servers and trainers; without it "
                  "servers run --insecure");
  cmd->add_option("--tls-cert", launch->tls_cert,
                  "TLS: the servers' certificate (PEM, the same path on every machine); with "
                  "--tls-key and --tls-ca")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tls-key", launch->tls_key, "TLS: the key of --tls-cert (PEM)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tls-ca", launch->tls_ca,
                  "TLS: what the trainers verify the servers' certificate with (the CA, or the "
                  "certificate itself when it is self-signed)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-restarts", launch->max_restarts,
                  "Failures the job survives: a dead server process is started again; a dead "
                  "trainer restarts every trainer, which resume from the trainer command's "
                  "--checkpoint (with --checkpoint-every N they lose at most N steps); if "
                  "this process is killed, the job runs on without it")
      ->check(non_negative());
  cmd->add_option("--server-feature-storage", launch->server_feature_storage,
                  "Where the servers read their part's 'feat' rows: memory (shared memory) or "
                  "disk (the part's file on each pull; see `graphloom serve --help`)")
      ->check(CLI::IsMember({"memory", "disk"}));
  auto* policy =
      cmd->add_option("--server-cache-policy", launch->server_cache_policy,
                      "With --server-feature-storage disk: each server's cache of hot rows "
                      "(degree, sieve, s3-fifo, lru, clock); with --server-cache-size")
          ->check(CLI::IsMember({"degree", "sieve", "s3-fifo", "lru", "clock"}));
  cmd->add_option("--server-cache-size", launch->server_cache_size,
                  "Bytes of each server's cache, e.g. 256M")
      ->needs(policy);
  policy->needs(cmd->get_option("--server-cache-size"));
  cmd->add_option("--ssh-user", launch->ssh_user, "User for ssh to the other machines");
  cmd->add_option("--ssh-port", launch->ssh_port, "ssh port");
  cmd->add_option("command", launch->command, "The trainer command, after --")->expected(-1);
  cmd->callback([launch] { exit_if_failed(distributed::launch_cluster(*launch)); });
}

}  // namespace graphloom::cli
