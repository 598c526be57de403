// One command for a whole partitioned training job (DGL's launch.py): the graph servers and
// the trainers of every machine of an ip config, local processes for this machine's addresses
// and ssh for the others.
#pragma once

#include <string>
#include <vector>

namespace graphloom::distributed {

struct ClusterLaunchOptions {
  std::string ip_config;    // machines, one "ip [port]" per line; part m runs on line m
  std::string part_config;  // the partition directory (the same path on every machine)
  int num_servers = 1;      // graph servers per machine
  int num_trainers = 1;     // trainers per machine
  std::string cluster_id = "graphloom";  // names the shared-memory segments
  int master_port = 0;                   // trainers' rendezvous port on machine 0 (0: free)
  std::string token_file;                // the cluster token; none: servers run --insecure
  // TLS: the servers' certificate and key (PEM; the same files on every machine), and the CA
  // (or, self-signed, the certificate itself) the trainers verify them with. All or none.
  std::string tls_cert, tls_key, tls_ca;
  std::string ssh_user;  // for the other machines
  int ssh_port = 22;
  // Failures the job survives (process_launcher.h): a dead server process is started again
  // and re-serves its part; a dead trainer restarts all trainers, which resume from their
  // checkpoint.
  int max_restarts = 0;
  // Where the servers read the parts' "feat" rows (`serve --feature-storage`: memory or disk)
  // and the cache in front of disk reads (`serve --cache-policy`, `--cache-size`; empty: none).
  std::string server_feature_storage = "memory";
  std::string server_cache_policy, server_cache_size;
  // The trainer command. Launch adds --part-config, --ip-config, --num-servers, --machine,
  // --cluster-id, --token-file and --tls-ca (ClusterOptions::trainer_flags); a copy of one with
  // the same value is dropped, another value is a UsageError. Other trainers (Python) find the
  // same in their environment (ClusterOptions::environment_variables).
  std::vector<std::string> command;
};

// Checks every machine first (ssh reachable, the partition readable here), then starts the
// servers and trainers, gives each trainer its rank, world, rendezvous and thread share,
// forwards SIGINT/SIGTERM, stops the servers when the trainers are done, and removes this
// machine's shared memory segments. Returns the first failure's exit code (0: success).
int launch_cluster(const ClusterLaunchOptions& options);

}  // namespace graphloom::distributed
