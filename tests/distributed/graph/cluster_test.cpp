// distributed::Cluster against two loopback graph servers: what it reads from the partition
// and the ip config, the rows through its cache, the splits, and the errors of a cluster whose
// files disagree.
#include "graphloom/distributed/graph/cluster.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <filesystem>
#include <fstream>

#include "distributed/dist_fixtures.h"
#include "graphloom/io/generators.h"
#include "graphloom/partition/assign.h"
#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

// An ip config of `machines` (each "ip:port"), and a token file only its owner reads.
ClusterOptions options_for(const std::filesystem::path& dir,
                           const std::vector<std::vector<std::string>>& machines) {
  ClusterOptions options;
  options.part_config = dir / "parts";
  options.ip_config = dir / "ip.txt";
  options.token_file = dir / "token";
  std::ofstream ip_config(options.ip_config);
  for (const auto& servers : machines) {
    const std::string& address = servers.at(0);
    const auto colon = address.rfind(':');
    ip_config << address.substr(0, colon) << ' ' << address.substr(colon + 1) << '\n';
  }
  std::ofstream(options.token_file) << "t";
  std::filesystem::permissions(
      options.token_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return options;
}

TEST(Cluster, ConnectsToEveryPartAndReadsRowsAndSplits) {
  testing::TempDir dir;
  const io::Dataset data = io::generate_planted(
      {.num_nodes = 300, .num_classes = 3, .avg_degree = 6, .feat_dim = 8, .seed = 2});
  partition::write_partitions(data, partition::assign_random(data.num_nodes(), 2, 4), 2,
                              dir / "parts", {.method = "random"});
  const auto [servers, addresses] = testing::serve_parts(dir / "parts", 2, "t");
  const ClusterOptions options = options_for(dir.path(), addresses);

  const Cluster cluster(options, /*machine=*/1,
                        {.policy = features::CachePolicy::kSieve, .bytes = 64 * 8 * 4});
  EXPECT_EQ(cluster.info().num_parts, 2);
  EXPECT_EQ(cluster.machine(), 1);
  EXPECT_EQ(cluster.local_part(), nullptr);  // no cluster id: every part by RPC
  const at::Tensor ids = at::randperm(data.num_nodes(), at::kLong);
  EXPECT_TRUE(at::equal(cluster.rows().gather("feat", ids), cluster.graph().gather("feat", ids)));
  EXPECT_GT(cluster.cache_stats(/*reset=*/true).misses, 0);
  EXPECT_EQ(cluster.cache_stats(/*reset=*/false).misses, 0);  // reset
  const at::Tensor train = cluster.split("train");
  EXPECT_EQ(train.numel(),
            partition::load_partition_split(dir / "parts", cluster.info(), 0, "train").numel() +
                partition::load_partition_split(dir / "parts", cluster.info(), 1, "train").numel());
  // Machine 1's single trainer, without evening out: exactly the nodes part 1 owns.
  const at::Tensor mine =
      train.index_select(0, cluster.split_items(train, 0, 1, {.force_even = false}));
  EXPECT_TRUE(
      at::equal(cluster.graph().book().owner_of(mine), at::ones({mine.numel()}, at::kLong)));
}

TEST(Cluster, FilesThatDisagreeAreErrorsNamingThem) {
  testing::TempDir dir;
  const io::Dataset data = io::generate_planted({.num_nodes = 100, .seed = 1});
  partition::write_partitions(data, partition::assign_random(data.num_nodes(), 2, 4), 2,
                              dir / "parts", {.method = "random"});
  const ClusterOptions one_machine = options_for(dir.path(), {{"127.0.0.1:1"}});
  const std::string error = testing::error_of([&] { Cluster cluster(one_machine, 0); });
  EXPECT_NE(error.find("has 2 parts but the ip config"), std::string::npos) << error;
  EXPECT_NE(error.find("ip.txt"), std::string::npos) << error;
  const ClusterOptions two = options_for(dir.path(), {{"127.0.0.1:1"}, {"127.0.0.1:2"}});
  EXPECT_THROW(Cluster(two, 2), RangeError);
}

TEST(Cluster, MachineIsTheOptionElseTheNodeRank) {
  ProcessEnvironment env;
  env.rank = 5;
  env.local_world_size = 2;
  ClusterOptions options;
  options.machine = 0;
  EXPECT_EQ(machine_of(options, env), 0);
  options.machine = -1;
  if (std::getenv("GRAPHLOOM_MACHINE") == nullptr) {
    EXPECT_EQ(machine_of(options, env), 2);
  }
}

}  // namespace
}  // namespace graphloom::distributed
