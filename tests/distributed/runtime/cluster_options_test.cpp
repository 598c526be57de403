// ClusterOptions: what launch writes into a trainer's environment reads back as the same
// cluster, the flags of `graphloom train` say the same, and the client options carry the token,
// TLS files and deadline.
#include "graphloom/distributed/runtime/cluster_options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "graphloom/base/error.h"

namespace graphloom::distributed {
namespace {

ClusterOptions full_cluster() {
  ClusterOptions cluster;
  cluster.part_config = "/data/parts";
  cluster.ip_config = "/data/ip.txt";
  cluster.servers_per_machine = 3;
  cluster.machine = 1;
  cluster.cluster_id = "job7";
  cluster.tls_ca = "/certs/ca.pem";
  cluster.tls_cert = "/certs/me.pem";
  cluster.tls_key = "/certs/me.key";
  cluster.deadline_seconds = 7.5;
  return cluster;
}

// Sets the variables for the test's scope and removes them after.
class Environment {
 public:
  using Variables = std::map<std::string, std::string>;
  explicit Environment(const Variables& variables) : variables_(variables) {
    for (const auto& [name, value] : variables_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~Environment() {
    for (const auto& [name, value] : variables_) ::unsetenv(name.c_str());
  }

 private:
  Variables variables_;
};

TEST(ClusterOptions, TheEnvironmentReadsBackAsTheSameCluster) {
  const ClusterOptions cluster = full_cluster();
  const Environment environment(cluster.environment_variables());
  const ClusterOptions read = ClusterOptions::from_environment();
  EXPECT_EQ(read.part_config, cluster.part_config);
  EXPECT_EQ(read.ip_config, cluster.ip_config);
  EXPECT_EQ(read.servers_per_machine, 3);
  EXPECT_EQ(read.machine, 1);
  EXPECT_EQ(read.cluster_id, "job7");
  EXPECT_EQ(read.tls_ca, cluster.tls_ca);
  EXPECT_EQ(read.tls_cert, cluster.tls_cert);
  EXPECT_EQ(read.tls_key, cluster.tls_key);
  EXPECT_EQ(read.deadline_seconds, 7.5);
}

TEST(ClusterOptions, AnEmptyEnvironmentKeepsTheDefaultsAndABadNumberIsNamed) {
  const ClusterOptions read = ClusterOptions::from_environment();
  EXPECT_TRUE(read.part_config.empty() && read.tls_ca.empty());
  EXPECT_EQ(read.machine, -1);
  const Environment environment(Environment::Variables{{"GRAPHLOOM_NUM_SERVERS", "two"}});
  try {
    ClusterOptions::from_environment();
    FAIL() << "a malformed GRAPHLOOM_NUM_SERVERS was accepted";
  } catch (const OptionError& error) {
    EXPECT_EQ(error.field(), "GRAPHLOOM_NUM_SERVERS");
  }
  const Environment timeout(Environment::Variables{{"GRAPHLOOM_RPC_TIMEOUT", "-1"}});
  EXPECT_THROW(ClusterOptions::from_environment(), OptionError);
}

TEST(ClusterOptions, TrainerFlagsSayTheSameAndSkipWhatIsUnset) {
  const std::vector<std::string> flags = full_cluster().trainer_flags();
  const auto value_of = [&](const std::string& flag) {
    const auto found = std::find(flags.begin(), flags.end(), flag);
    return found == flags.end() ? std::string("<absent>") : *(found + 1);
  };
  EXPECT_EQ(value_of("--part-config"), "/data/parts");
  EXPECT_EQ(value_of("--num-servers"), "3");
  EXPECT_EQ(value_of("--machine"), "1");
  EXPECT_EQ(value_of("--tls-ca"), "/certs/ca.pem");
  EXPECT_EQ(value_of("--token-file"), "<absent>");  // none set: the flag is left out
  EXPECT_EQ(value_of("--rpc-timeout"), "7.5");
}

TEST(ClusterOptions, ClientOptionsCarryTokenTlsAndDeadline) {
  ClusterOptions cluster = full_cluster();
  cluster.deadline_seconds = 2.5;
  const Environment environment(Environment::Variables{{"GRAPHLOOM_TOKEN", "secret-token"}});
  const ClientOptions client = cluster.client_options();
  EXPECT_EQ(client.token, "secret-token");
  EXPECT_EQ(client.tls_ca, "/certs/ca.pem");
  EXPECT_EQ(client.tls_cert, "/certs/me.pem");
  EXPECT_EQ(client.tls_key, "/certs/me.key");
  EXPECT_EQ(client.deadline.count(), 2500);
  EXPECT_EQ(client.outage_grace.count(), 2500);
}

}  // namespace
}  // namespace graphloom::distributed
