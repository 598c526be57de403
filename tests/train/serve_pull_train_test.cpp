// gRPC with Debian's protobuf, and libtorch from the wheel (which carries protobuf 3.13 of its
// own), in one process: graph servers serve two parts, a client pulls rows over the wire, and a
// trainer learns over those servers. A symbol clash between the two protobufs would break the
// messages or crash here.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <filesystem>
#include <fstream>

#include "distributed/dist_fixtures.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/io/generators.h"
#include "graphloom/partition/assign.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/train/partitioned_training.h"
#include "support/test_support.h"

namespace graphloom::train {
namespace {

TEST(OneProcess, ServesPullsAndTrainsBesideLibtorch) {
  graphloom::testing::TempDir dir;
  const io::Dataset data = io::generate_planted(
      {.num_nodes = 800, .num_classes = 3, .avg_degree = 8, .feat_dim = 16, .seed = 5});
  partition::write_partitions(data, partition::assign_random(data.num_nodes(), 2, 7), 2,
                              dir / "parts", {.method = "random"});
  const auto [servers, addresses] = graphloom::testing::serve_parts(dir / "parts", 2, "t");
  const distributed::ClientOptions client{.token = "t", .deadline = std::chrono::seconds(20)};

  // Pulls: every row, in relabelled order, is the partition's own row.
  distributed::DistGraph graph(addresses, client);
  const partition::Partition whole = partition::join_partitions(
      {partition::load_partition(dir / "parts", 0), partition::load_partition(dir / "parts", 1)});
  const at::Tensor ids = at::randperm(data.num_nodes(), at::kLong);
  EXPECT_TRUE(at::equal(graph.gather("feat", ids), whole.features.at("feat").index_select(0, ids)));

  // Training over the same servers learns the planted classes.
  TrainOptions options;
  options.model.kind = nn::ModelKind::kSage;
  options.model.hidden = 16;
  options.fanouts = {5, 5};
  options.batch_size = 64;
  options.epochs = 5;
  options.lr = 0.01;
  options.eval = EvalMode::kSampled;
  options.progress = false;
  PartitionedJob job;
  job.cluster.part_config = dir / "parts";
  job.cluster.ip_config = dir / "ip.txt";
  job.cluster.token_file = dir / "token";
  job.cluster.deadline_seconds = 20;
  {
    std::ofstream ip_config(job.cluster.ip_config);
    for (const auto& machine : addresses) {
      const std::string& address = machine.at(0);
      ip_config << address.substr(0, address.rfind(':')) << ' '
                << address.substr(address.rfind(':') + 1) << '\n';
    }
    std::ofstream(job.cluster.token_file) << "t";
    std::filesystem::permissions(job.cluster.token_file, std::filesystem::perms::owner_read |
                                                             std::filesystem::perms::owner_write);
  }
  const TrainResult result = train_on_partitions(job, options, /*group=*/nullptr);
  EXPECT_GT(result.steps, 0);
  EXPECT_GT(result.test_acc, 0.6);
}

}  // namespace
}  // namespace graphloom::train
