// ClusterOptions to and from the environment, the trainer flags and the client options.
#include "graphloom/distributed/runtime/cluster_options.h"

#include <chrono>
#include <cstdlib>

#include "graphloom/distributed/rpc/graph_server.h"

namespace graphloom::distributed {
namespace {

// Each string field with its variable and its `graphloom train` flag.
struct Field {
  std::string ClusterOptions::*member;
  const char* variable;
  const char* flag;
};

constexpr Field kStringFields[] = {
    {&ClusterOptions::part_config, "GRAPHLOOM_PART_CONFIG", "--part-config"},
    {&ClusterOptions::ip_config, "GRAPHLOOM_IP_CONFIG", "--ip-config"},
    {&ClusterOptions::cluster_id, "GRAPHLOOM_CLUSTER_ID", "--cluster-id"},
    {&ClusterOptions::token_file, "GRAPHLOOM_TOKEN_FILE", "--token-file"},
    {&ClusterOptions::tls_ca, "GRAPHLOOM_TLS_CA", "--tls-ca"},
    {&ClusterOptions::tls_cert, "GRAPHLOOM_TLS_CERT", "--tls-cert"},
    {&ClusterOptions::tls_key, "GRAPHLOOM_TLS_KEY", "--tls-key"},
};

// An integer variable, or `fallback` when it is unset; a malformed one is an OptionError.
int integer_variable(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (*end != '\0') {
    throw OptionError(name, fmt::format("must be an integer, got '{}'", value));
  }
  return static_cast<int>(parsed);
}

// A positive number of seconds, or `fallback` when the variable is unset.
double seconds_variable(const char* name, double fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  const double parsed = std::strtod(value, &end);
  if (*end != '\0' || !(parsed > 0)) {
    throw OptionError(name, fmt::format("must be a positive number of seconds, got '{}'", value));
  }
  return parsed;
}

}  // namespace

ClusterOptions ClusterOptions::from_environment() {
  ClusterOptions options;
  for (const Field& field : kStringFields) {
    if (const char* value = std::getenv(field.variable)) options.*field.member = value;
  }
  options.servers_per_machine = integer_variable("GRAPHLOOM_NUM_SERVERS", 1);
  options.machine = integer_variable("GRAPHLOOM_MACHINE", -1);
  options.deadline_seconds = seconds_variable("GRAPHLOOM_RPC_TIMEOUT", options.deadline_seconds);
  return options;
}

std::map<std::string, std::string> ClusterOptions::environment_variables() const {
  std::map<std::string, std::string> variables{
      {"GRAPHLOOM_NUM_SERVERS", std::to_string(servers_per_machine)},
      {"GRAPHLOOM_RPC_TIMEOUT", fmt::format("{}", deadline_seconds)}};
  if (machine >= 0) variables["GRAPHLOOM_MACHINE"] = std::to_string(machine);
  for (const Field& field : kStringFields) variables[field.variable] = this->*field.member;
  return variables;
}

std::vector<std::string> ClusterOptions::trainer_flags() const {
  std::vector<std::string> flags{"--num-servers", std::to_string(servers_per_machine),
                                 "--rpc-timeout", fmt::format("{}", deadline_seconds)};
  if (machine >= 0) flags.insert(flags.end(), {"--machine", std::to_string(machine)});
  for (const Field& field : kStringFields) {
    if (!(this->*field.member).empty())
      flags.insert(flags.end(), {field.flag, this->*field.member});
  }
  return flags;
}

ClientOptions ClusterOptions::client_options() const {
  ClientOptions client;
  client.token = cluster_token(token_file);
  client.deadline = std::chrono::milliseconds(static_cast<int64_t>(deadline_seconds * 1e3));
  client.outage_grace = client.deadline;
  client.tls_ca = tls_ca;
  client.tls_cert = tls_cert;
  client.tls_key = tls_key;
  return client;
}

}  // namespace graphloom::distributed
