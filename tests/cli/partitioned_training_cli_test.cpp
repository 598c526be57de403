// Training on a partitioned graph, end to end on loopback: 2 "machines" (a graph server each,
// on different ports of 127.0.0.1) and 1 trainer per machine, against the same job on one
// machine.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "cli/leaky_dataset.h"
#include "graphloom/distributed/rpc/graph_client.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "support/test_support.h"

namespace graphloom::testing {
namespace {

double test_accuracy(const std::string& output) { return printed_number(output, "test accuracy"); }

bool healthy(const std::string& address) {
  try {
    return distributed::GraphClient(
               address, {.token = "t0ken", .deadline = std::chrono::seconds(2), .retries = 0})
               .health() == "serving";
  } catch (const std::exception&) {
    return false;
  }
}

// Partitions `data` in 2 (METIS), serves each part from its own server process, trains with
// one trainer per part, and returns rank 0's output.
std::string train_partitioned(const TempDir& dir, const std::string& data, const std::string& flags,
                              const std::string& partition_flags = "--balance-train") {
  const auto partitioned =
      run_graphloom("partition --data " + data + " --parts 2 --method metis --out parts --force " +
                        partition_flags,
                    dir.path());
  EXPECT_EQ(partitioned.exit_code, 0) << partitioned.output;
  const int port = free_port_range(11);
  {
    std::ofstream ip(dir / "ip.txt");
    ip << "127.0.0.1 " << port << "\n127.0.0.1 " << port + 10 << "\n";
  }
  const std::string cluster = fmt::format("test{}-train", ::getpid());
  std::vector<std::unique_ptr<BackgroundProcess>> servers;
  for (int part = 0; part < 2; ++part) {
    servers.push_back(std::make_unique<BackgroundProcess>(
        std::vector<std::string>{
            "serve", "--part-config", (dir / "parts").string(), "--part", std::to_string(part),
            "--address", fmt::format("127.0.0.1:{}", port + 10 * part), "--cluster-id", cluster},
        std::vector<std::string>{"GRAPHLOOM_TOKEN=t0ken"},
        dir / fmt::format("server{}.log", part)));
    EXPECT_TRUE(
        eventually([&] { return healthy(fmt::format("127.0.0.1:{}", port + 10 * part)); }, 60))
        << servers.back()->output();
  }
  const int master = free_port_range();
  std::vector<std::unique_ptr<BackgroundProcess>> trainers;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::string> args{
        "train",       "--part-config",           (dir / "parts").string(),
        "--ip-config", (dir / "ip.txt").string(), "--cluster-id",
        cluster,       "--no-progress",           "--check-sync",
        "10"};
    std::istringstream extra(flags);
    for (std::string flag; extra >> flag;) args.push_back(flag);
    trainers.push_back(std::make_unique<BackgroundProcess>(
        args,
        std::vector<std::string>{fmt::format("RANK={}", rank), "WORLD_SIZE=2", "LOCAL_RANK=0",
                                 "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=127.0.0.1",
                                 fmt::format("MASTER_PORT={}", master), "OMP_NUM_THREADS=1",
                                 "GRAPHLOOM_TOKEN=t0ken"},
        dir / fmt::format("trainer{}.log", rank)));
  }
  for (auto& trainer : trainers) EXPECT_EQ(trainer->wait_for(300), 0) << trainer->output();
  for (auto& server : servers) {
    server->kill(SIGTERM);
    EXPECT_EQ(server->wait_for(30), 0) << server->output();
  }
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    EXPECT_EQ(entry.path().filename().string().find(cluster), std::string::npos);
  }
  return trainers[0]->output();
}

TEST(PartitionedTrainingCli, PlantedGraphOnTwoMachinesMatchesOneMachine) {
  TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --out data --num-nodes 20000", dir.path()).exit_code,
            0);
  // Layer-wise inference over DistGraph for evaluation; remote rows through a SIEVE cache.
  const std::string flags = "--eval full --fanouts 5,5 --epochs 3 --lr 0.01 --hidden 64";
  const std::string output = train_partitioned(
      dir, "data", flags + " --batch-size 128 --cache-policy sieve --cache-size 1M");
  EXPECT_NE(output.find("cache hits"), std::string::npos) << output;
  const auto single =
      run_graphloom("train --data data --no-progress " + flags + " --batch-size 256", dir.path());
  ASSERT_EQ(single.exit_code, 0) << single.output;
  std::cout << "planted: one machine " << test_accuracy(single.output) << ", two machines "
            << test_accuracy(output) << "\n";
  EXPECT_GT(test_accuracy(output), 0.9) << output;
  EXPECT_NEAR(test_accuracy(output), test_accuracy(single.output), 0.03);
  // GCN normalizes by the whole-graph degrees the partitioner recorded.
  const std::string gcn = train_partitioned(dir, "data", flags + " --model gcn --batch-size 128");
  EXPECT_GT(test_accuracy(gcn), 0.9) << gcn;
}

// A typed graph on two machines: per-type ranges in the parts, typed sampling over RPC (edge
// types travel with the picks), R-GCN as on one machine.
TEST(PartitionedTrainingCli, TypedGraphOnTwoMachinesMatchesOneMachine) {
  TempDir dir;
  ASSERT_EQ(run_graphloom("generate typed-planted --out typed --num-items 6000 --num-users 1500",
                          dir.path())
                .exit_code,
            0);
  const std::string flags =
      "--model rgcn --eval full --fanouts 10,10 --epochs 8 --lr 0.01 --hidden 32 "
      "--edge-type-fanout related=2,2";
  const std::string output = train_partitioned(dir, "typed", flags + " --batch-size 64");
  EXPECT_NE(output.find("typed graph: 2 node types, 3 edge types"), std::string::npos) << output;
  const auto single =
      run_graphloom("train --data typed --no-progress " + flags + " --batch-size 128", dir.path());
  ASSERT_EQ(single.exit_code, 0) << single.output;
  std::cout << "typed planted (rgcn): one machine " << test_accuracy(single.output)
            << ", two machines " << test_accuracy(output) << "\n";
  EXPECT_GT(test_accuracy(output), 0.75) << output;
  EXPECT_NEAR(test_accuracy(output), test_accuracy(single.output), 0.05);
}

// Link prediction on two machines: edge splits travel with the partition, each trainer takes
// its share of the training pairs, the replicated embedding's gradients are averaged.
TEST(PartitionedTrainingCli, LinkPredictionOnTwoMachinesMatchesOneMachine) {
  TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --out g --num-nodes 3000", dir.path()).exit_code, 0);
  ASSERT_EQ(run_graphloom("convert --from graphloom g g-link --link-split 0.05,0.1", dir.path())
                .exit_code,
            0);
  const std::string flags =
      "--task link --fanouts 5,5 --epochs 6 --hidden 32 --lr 0.01 --eval-every 3 --batch-size 256";
  const std::string output = train_partitioned(dir, "g-link", flags);
  const auto single = run_graphloom("train --data g-link --no-progress " + flags, dir.path());
  ASSERT_EQ(single.exit_code, 0) << single.output;
  std::smatch two, one;
  ASSERT_TRUE(std::regex_search(output, two, std::regex("test AUC ([0-9.]+)"))) << output;
  ASSERT_TRUE(std::regex_search(single.output, one, std::regex("test AUC ([0-9.]+)")))
      << single.output;
  std::cout << "link prediction: one machine AUC " << one[1] << ", two machines " << two[1] << "\n";
  EXPECT_GT(std::stod(two[1]), 0.8) << output;
  EXPECT_NEAR(std::stod(two[1]), std::stod(one[1]), 0.05);
  // Learnable inputs: a DistEmbedding on the servers (sparse Adam applied by the owners).
  const std::string embedded = train_partitioned(
      dir, "g-link",
      "--task link --fanouts 5,5 --epochs 10 --hidden 32 --lr 0.01 --eval-every 5 "
      "--batch-size 256 --embed-dim 32");
  ASSERT_TRUE(std::regex_search(embedded, two, std::regex("test AUC ([0-9.]+)"))) << embedded;
  std::cout << "link prediction with a DistEmbedding: two machines AUC " << two[1] << "\n";
  EXPECT_GT(std::stod(two[1]), 0.8) << embedded;  // one machine, replicated table: 0.855
}

// Typed link prediction on two machines: MovieLens users rank the movies of both parts.
TEST(PartitionedTrainingCli, TypedLinkPredictionOnTwoMachines) {
  GL_REQUIRE_SHARED_DATASET(movielens, "movielens_small");
  TempDir dir;
  ASSERT_EQ(
      run_graphloom("convert --from shared " + movielens.string() + " ml --rating-split random",
                    dir.path())
          .exit_code,
      0);
  const std::string output = train_partitioned(
      dir, "ml",
      "--task link --model rsage --fanouts 5,5 --epochs 5 --hidden 32 --lr 0.01 --eval-every 5 "
      "--batch-size 2048 --scorer dot --loss bpr --bias --dropout 0",
      "");
  EXPECT_NE(output.find("user -> movie pairs, 9742 movie candidates"), std::string::npos) << output;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(output, match, std::regex("test AUC ([0-9.]+)"))) << output;
  EXPECT_GT(std::stod(match[1]), 0.75) << output;
  EXPECT_NE(output.find("full ranking of 9742 candidates"), std::string::npos) << output;
  std::smatch ranking;
  if (std::regex_search(output, ranking, std::regex("full ranking[^\n]*"))) {
    std::cout << "movielens on two machines: test AUC " << match[1] << ", " << ranking[0] << "\n";
  }
}

// Time-aware link prediction on two machines: the partitions carry the ratings' times, so the
// temporal split trains as on one machine, each pair sampled from its past on the servers
// (--temporal), and beats plain popularity.
TEST(PartitionedTrainingCli, TimeAwareLinkPredictionOnTwoMachines) {
  GL_REQUIRE_SHARED_DATASET(movielens, "movielens_small");
  TempDir dir;
  ASSERT_EQ(
      run_graphloom("convert --from shared " + movielens.string() + " ml", dir.path()).exit_code,
      0);
  const std::string output = train_partitioned(
      dir, "ml",
      "--task link --model rsage --fanouts 10,10 --epochs 2 --hidden 64 --lr 0.01 "
      "--eval-every 2 --batch-size 1024 --scorer dot --loss bpr --negatives 4 --dropout 0 "
      "--recency-half-life 500 --popularity-prior --temporal",
      "");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(
      output, match,
      std::regex("74 test queries: Recall@20 ([0-9.]+)  MAP@10 ([0-9.]+)  \\(popularity: "
                 "([0-9.]+) / ([0-9.]+); recency-weighted popularity")))
      << output;
  EXPECT_GT(std::stod(match[1]), 1.3 * std::stod(match[3])) << output;
  EXPECT_GT(std::stod(match[2]), 1.15 * std::stod(match[4])) << output;
  std::cout << "time-aware movielens on two machines: " << match[0] << "\n";
  std::smatch auc;
  ASSERT_TRUE(std::regex_search(output, auc, std::regex("test AUC ([0-9.]+)"))) << output;
  EXPECT_GT(std::stod(auc[1]), 0.6) << output;  // each pair scored from its past on the servers
}

TEST(PartitionedTrainingCli, CoraOnTwoMachinesWithinTwoPointsOfOneMachine) {
  GL_REQUIRE_SHARED_DATASET(cora, "cora");
  TempDir dir;
  ASSERT_EQ(run_graphloom("convert --from shared " + cora.string() + " cora", dir.path()).exit_code,
            0);
  const std::string flags = "--eval full --fanouts 10,10 --epochs 20 --hidden 64 --lr 0.01";
  const std::string output = train_partitioned(dir, "cora", flags + " --batch-size 16");
  const auto single =
      run_graphloom("train --data cora --no-progress " + flags + " --batch-size 32", dir.path());
  ASSERT_EQ(single.exit_code, 0) << single.output;
  std::cout << "Cora: one machine " << test_accuracy(single.output) << ", two machines "
            << test_accuracy(output) << "\n";
  EXPECT_GT(test_accuracy(output), 0.75) << output;
  // The issue's bound: within 2 points (0.807 vs 0.818 with METIS's recursive bisection; k-way
  // parts gave 0.794).
  EXPECT_NEAR(test_accuracy(output), test_accuracy(single.output), 0.02);
}

// Temporal sampling on the graph servers: labels readable only from future neighbors are read
// without --temporal and not with it, in training and in (sampled) evaluation on 2 machines;
// the typed graph's parts keep each edge-type segment sorted by time.
class PartitionedTemporalCli : public ::testing::TestWithParam<bool> {};

INSTANTIATE_TEST_SUITE_P(UntypedAndTyped, PartitionedTemporalCli, ::testing::Bool());

TEST_P(PartitionedTemporalCli, TemporalTrainingOnTwoMachinesCannotReadTheFuture) {
  TempDir dir;
  const bool typed = GetParam();
  write_leaky_dataset(dir / "leaky", typed);
  const std::string flags =
      std::string(typed ? "--model rgcn " : "") +
      "--epochs 15 --fanouts 10 --hidden 16 --lr 0.02 --batch-size 64 --seed 2 --eval sampled";
  const auto accuracy = [](const std::string& output) {
    return printed_number(output, "validation accuracy");
  };
  const std::string leaky = train_partitioned(dir, "leaky", flags);
  EXPECT_GT(accuracy(leaky), 0.9) << leaky;
  const std::string timed = train_partitioned(dir, "leaky", flags + " --temporal");
  const double timed_accuracy = accuracy(timed);
  EXPECT_GE(timed_accuracy, 0) << timed;
  EXPECT_LT(timed_accuracy, 0.7) << "the future leaked\n" << timed;
}

TEST(PartitionedTrainingCli, BadIpConfigAndMissingFlagsAreClearErrors) {
  TempDir dir;
  {
    std::ofstream ip(dir / "ip.txt");
    ip << "127.0.0.1 notaport\n";
  }
  auto result = run_graphloom("train --part-config parts --ip-config ip.txt", dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("'notaport' is not a port"), std::string::npos) << result.output;
  result = run_graphloom("train --part-config parts", dir.path());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("--ip-config"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace graphloom::testing
