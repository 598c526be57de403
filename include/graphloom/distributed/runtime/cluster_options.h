// Where a trainer's cluster is and how to reach it: one description for the C++ trainer
// (`train --part-config ...`), the Python package (graphloom.distributed.initialize) and the
// launcher, which hands every trainer the same values, as flags to graphloom trainers and as
// environment variables to the others.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graphloom/distributed/rpc/graph_client.h"

namespace graphloom::distributed {

struct ClusterOptions {
  std::string part_config;  // the partition directory (or its partition.json); "": no cluster
  std::string ip_config;    // the machines (ip_config.h)
  int servers_per_machine = 1;
  int machine = -1;        // this trainer's line of the ip config; -1: from the trainer's rank
  std::string cluster_id;  // the servers' cluster id: map this machine's part from shared memory
  std::string token_file;  // the cluster token (else GRAPHLOOM_TOKEN)
  // TLS to servers run with --tls-cert: the CA (or self-signed certificate) that signed their
  // certificates, and this trainer's own certificate and key for servers that ask (--tls-ca).
  std::string tls_ca, tls_cert, tls_key;
  // The longest a call to a server may take, and the longest a part may be without a live
  // server before the trainer gives up on it (GRAPHLOOM_RPC_TIMEOUT, `train --rpc-timeout`).
  double deadline_seconds = 30;

  // The GRAPHLOOM_* variables of environment_variables(); unset ones keep their defaults.
  static ClusterOptions from_environment();
  // The variables a trainer of this cluster finds in its environment (launch sets them).
  std::map<std::string, std::string> environment_variables() const;
  // The flags of `graphloom train` that say the same (launch appends them to its trainers).
  std::vector<std::string> trainer_flags() const;
  // The token, TLS files and deadline of the trainer's connections to the servers.
  ClientOptions client_options() const;
};

}  // namespace graphloom::distributed
