// Full-neighbor inference on a partitioned graph with its layer outputs on the graph servers
// (DistTensor): two trainers on two loopback parts get what one process computes on the
// joined graph, and the outputs stay readable on the servers afterwards.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <mutex>

#include "distributed/dist_fixtures.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/io/generators.h"
#include "graphloom/nn/models.h"
#include "graphloom/partition/assign.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/train/inference.h"
#include "graphloom/train/partitioned_training.h"
#include "support/test_support.h"

namespace graphloom::train {
namespace {

using graphloom::testing::run_ranks;

TEST(DistTensorInference, TwoTrainersOnTwoPartsEqualOneProcessOnTheJoinedGraph) {
  graphloom::testing::TempDir dir;
  const io::Dataset data = io::generate_planted(
      {.num_nodes = 600, .num_classes = 3, .avg_degree = 6, .feat_dim = 8, .seed = 11});
  partition::write_partitions(data, partition::assign_random(data.num_nodes(), 2, 3), 2,
                              dir / "parts", {.method = "random"});
  const partition::Partition whole = partition::join_partitions(
      {partition::load_partition(dir / "parts", 0), partition::load_partition(dir / "parts", 1)});
  const sampling::LocalNeighborSource joined(whole.graph);
  const at::Tensor features = whole.features.at("feat");
  const nn::ModelConfig config{
      .kind = nn::ModelKind::kSage, .in = 8, .hidden = 6, .out = 3, .layers = 3};
  torch::manual_seed(0);
  const auto reference_model = nn::make_model(config);
  const at::Tensor expected = layerwise_inference(*reference_model, joined, features, 40);

  const auto [servers, addresses] = graphloom::testing::serve_parts(dir / "parts", 2, "t");
  const distributed::ClientOptions client{.token = "t", .deadline = std::chrono::seconds(20)};
  std::mutex init;
  std::vector<at::Tensor> results(2);
  std::string job;
  run_ranks(2, [&](distributed::ProcessGroup& group) {
    if (group.rank() == 0) job = group.job_id();
    distributed::DistGraph graph(addresses, client);
    std::shared_ptr<nn::GnnModel> model;
    {
      std::lock_guard lock(init);  // torch's seed is global: one replica at a time
      torch::manual_seed(0);
      model = nn::make_model(config);
    }
    const RowReader inputs = [&](const at::Tensor& ids) { return graph.gather("feat", ids); };
    const RowReader last = layerwise_inference(*model, graph, inputs, 40, false, &group,
                                               dist_tensor_outputs(graph, &group));
    results[group.rank()] = last(at::arange(data.num_nodes(), at::kLong));
  });
  for (const at::Tensor& result : results) {
    EXPECT_TRUE(at::allclose(result, expected, 1e-4, 1e-5));
  }
  // The last layer's rows live on the servers: a new client reads them back.
  distributed::DistGraph reader(addresses, client);
  const distributed::DistTensor output(reader, inference_tensor_name(job, 2), {at::kFloat, {3}});
  EXPECT_TRUE(
      at::allclose(output.pull(at::arange(data.num_nodes(), at::kLong)), expected, 1e-4, 1e-5));
}

}  // namespace
}  // namespace graphloom::train
