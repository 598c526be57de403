// Graph servers and DistGraph on loopback: a planted graph in 2 parts, one server per part.
// Sampling through DistGraph equals local sampling on the same (relabelled) graph, pulled rows
// equal the originals, pushes round-trip; bad tokens, bad ids, oversized and dead-server
// requests fail clearly while the servers keep serving. Server roles, shared memory, encoded
// rows and TLS: graph_server_test.cpp.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <map>
#include <thread>

#include "distributed/rpc/same_edges.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/io/generators.h"
#include "graphloom/partition/assign.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

using testing::error_of;

class GraphServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const io::Dataset data = io::generate_planted(
        {.num_nodes = 3000, .num_classes = 4, .avg_degree = 8, .feat_dim = 12, .seed = 5});
    partition::write_partitions(data, partition::assign_random(data.num_nodes(), 2, 7), 2,
                                dir_->path() / "parts", {.method = "random", .out_edges = true});
    // The whole relabelled graph, joined from its parts: what local sampling sees.
    for (int64_t part = 0; part < 2; ++part) {
      parts_[part] = partition::load_partition(dir_->path() / "parts", part);
    }
    const partition::Partition whole = partition::join_partitions({parts_[0], parts_[1]});
    whole_ = whole.graph;
    features_ = whole.features.at("feat");
    labels_ = whole.labels;
    EXPECT_EQ(whole_.num_nodes, data.num_nodes());
    for (int64_t part = 0; part < 2; ++part) {
      servers_[part] = new GraphServer({.partition_dir = dir_->path() / "parts",
                                        .part = part,
                                        .address = "127.0.0.1:0",
                                        .token = testing::kClusterToken,
                                        .max_message_bytes = 1 << 20});
    }
  }
  static void TearDownTestSuite() {
    for (GraphServer*& server : servers_) delete std::exchange(server, nullptr);
    delete std::exchange(dir_, nullptr);
  }

  static std::vector<std::vector<std::string>> addresses() {
    return {{servers_[0]->address()}, {servers_[1]->address()}};
  }

  static ClientOptions client_options() {  // the servers' 1 MB message limit
    return {.token = testing::kClusterToken,
            .deadline = std::chrono::seconds(10) * testing::kSlowdown,
            .max_message_bytes = 1 << 20};
  }

  static testing::TempDir* dir_;
  static partition::Partition parts_[2];
  static GraphServer* servers_[2];
  static graph::CscGraph whole_;
  static at::Tensor features_, labels_;
};

testing::TempDir* GraphServiceTest::dir_ = nullptr;
partition::Partition GraphServiceTest::parts_[2];
GraphServer* GraphServiceTest::servers_[2] = {nullptr, nullptr};
graph::CscGraph GraphServiceTest::whole_;
at::Tensor GraphServiceTest::features_, GraphServiceTest::labels_;

TEST_F(GraphServiceTest, OneHopEqualsLocalSampling) {
  for (const bool with_local_part : {false, true}) {
    const DistGraph graph(addresses(), client_options(), with_local_part ? &parts_[1] : nullptr);
    const sampling::LocalNeighborSource local(whole_);
    const at::Tensor seeds = at::randperm(3000, at::kLong).slice(0, 0, 500);
    for (const int64_t fanout : {-1, 3, 10}) {
      for (const bool replace : {false, true}) {
        for (const bool edge_ids : {true, false}) {
          const sampling::SampleOptions options{
              .replace = replace, .random_key = 42, .edge_ids = edge_ids};
          const sampling::SampledEdges picks = graph.sample_neighbors(seeds, fanout, options);
          EXPECT_EQ(picks.edge_ids.defined(), edge_ids);
          expect_same_edges(picks, local.sample_neighbors(seeds, fanout, options));
        }
      }
    }
  }
}

// Out-edges: the servers and the in-place local part sample the parts' out-edge lists, which
// give the same picks, edge ids and random streams as the reverse of the joined graph.
TEST_F(GraphServiceTest, OutEdgeSamplingEqualsLocalSampling) {
  for (const bool with_local_part : {false, true}) {
    const DistGraph graph(addresses(), client_options(), with_local_part ? &parts_[0] : nullptr);
    const sampling::LocalNeighborSource local(whole_);
    const at::Tensor seeds = at::randperm(3000, at::kLong).slice(0, 0, 400);
    for (const int64_t fanout : {-1, 4}) {
      for (const bool edge_ids : {true, false}) {
        const sampling::SampleOptions options{
            .direction = sampling::EdgeDirection::kOut, .random_key = 9, .edge_ids = edge_ids};
        expect_same_edges(graph.sample_neighbors(seeds, fanout, options),
                          local.sample_neighbors(seeds, fanout, options));
      }
    }
  }
  // The multi-layer sampler in the out direction, as on one machine.
  const DistGraph graph(addresses(), client_options(), &parts_[1]);
  const sampling::LocalNeighborSource local(whole_);
  const sampling::NeighborSamplerOptions options{
      .fanouts = {3, 3}, .direction = sampling::EdgeDirection::kOut, .seed = 1};
  const sampling::MiniBatch a =
      sampling::NeighborSampler(&graph, options).sample(at::arange(100, 300, at::kLong), 0, 0);
  const sampling::MiniBatch b =
      sampling::NeighborSampler(&local, options).sample(at::arange(100, 300, at::kLong), 0, 0);
  for (std::size_t l = 0; l < a.blocks.size(); ++l) {
    EXPECT_TRUE(at::equal(a.blocks[l].src_ids, b.blocks[l].src_ids));
    EXPECT_TRUE(at::equal(a.blocks[l].edge_ids, b.blocks[l].edge_ids));
  }
}

TEST_F(GraphServiceTest, LargeRequestsAreSplitIntoChunksAndMergedInOrder) {
  const DistGraph graph(addresses(), client_options());
  const sampling::LocalNeighborSource local(whole_);
  // More seeds (with repeats) than one sampling call carries, and more rows than one pull.
  const at::Tensor seeds = at::randint(0, 3000, {70000}, at::kLong);
  for (const bool edge_ids : {true, false}) {
    const sampling::SampleOptions options{.random_key = 11, .edge_ids = edge_ids};
    expect_same_edges(graph.sample_neighbors(seeds, 4, options),
                      local.sample_neighbors(seeds, 4, options));
  }
  const at::Tensor rows = at::randint(0, 3000, {120000}, at::kLong);
  EXPECT_TRUE(at::equal(graph.gather("feat", rows), features_.index_select(0, rows)));
}

TEST_F(GraphServiceTest, MultiLayerSamplerRunsUnchangedOnDistGraph) {
  const DistGraph graph(addresses(), client_options(), &parts_[0]);
  const sampling::LocalNeighborSource local(whole_);
  // With edge ids, and without them as training samples (the servers then leave them out).
  for (const bool edge_ids : {true, false}) {
    const sampling::NeighborSampler remote_sampler(
        &graph, {.fanouts = {5, 5}, .seed = 3, .edge_ids = edge_ids});
    const sampling::NeighborSampler local_sampler(
        &local, {.fanouts = {5, 5}, .seed = 3, .edge_ids = edge_ids});
    for (int64_t batch = 0; batch < 3; ++batch) {
      const at::Tensor seeds = at::arange(batch * 200, batch * 200 + 200, at::kLong);
      const sampling::MiniBatch a = remote_sampler.sample(seeds, 1, batch);
      const sampling::MiniBatch b = local_sampler.sample(seeds, 1, batch);
      ASSERT_EQ(a.blocks.size(), b.blocks.size());
      for (std::size_t l = 0; l < a.blocks.size(); ++l) {
        EXPECT_TRUE(at::equal(a.blocks[l].src_ids, b.blocks[l].src_ids));
        EXPECT_TRUE(at::equal(a.blocks[l].indices, b.blocks[l].indices));
        EXPECT_EQ(a.blocks[l].edge_ids.defined(), edge_ids);
        if (edge_ids) {
          EXPECT_TRUE(at::equal(a.blocks[l].edge_ids, b.blocks[l].edge_ids));
        }
      }
    }
  }
}

// LABOR's variates travel with the request: the servers keep what the whole graph keeps,
// with batch dependency (two windows blended) and a bad window position refused remotely.
// LABOR-* decides on the client over the candidates the servers return: the same batches too.
TEST_F(GraphServiceTest, LaborOnTheServersEqualsLocalLabor) {
  const DistGraph graph(addresses(), client_options(), &parts_[0]);
  const sampling::LocalNeighborSource local(whole_);
  for (const int64_t rounds : {0, 2}) {
    const sampling::NeighborSamplerOptions options{
        .fanouts = {4, 4},
        .seed = 8,
        .method = sampling::SamplingMethod::kLabor,
        .labor = {.batch_dependency = 4, .importance_sampling = rounds}};
    const sampling::NeighborSampler remote_sampler(&graph, options);
    const sampling::NeighborSampler local_sampler(&local, options);
    for (int64_t batch = 0; batch < 3; ++batch) {
      const at::Tensor seeds = at::arange(batch * 300, batch * 300 + 300, at::kLong);
      const sampling::MiniBatch a = remote_sampler.sample(seeds, 2, batch);
      const sampling::MiniBatch b = local_sampler.sample(seeds, 2, batch);
      for (std::size_t l = 0; l < a.blocks.size(); ++l) {
        EXPECT_TRUE(at::equal(a.blocks[l].src_ids, b.blocks[l].src_ids)) << rounds;
        EXPECT_TRUE(at::equal(a.blocks[l].indices, b.blocks[l].indices)) << rounds;
        EXPECT_EQ(a.blocks[l].edge_weights.defined(), rounds != 0);
        if (rounds != 0) {
          EXPECT_TRUE(at::equal(a.blocks[l].edge_weights, b.blocks[l].edge_weights));
        }
      }
    }
  }
  sampling::SampleOptions bad{.random_key = 1};
  bad.labor = {.enabled = true, .key = 3, .blend = true, .next_key = 4, .mix = 1.5};
  EXPECT_NE(error_of([&] {
              graph.sample_neighbors(at::arange(2000, 2100, at::kLong), 3, bad);
            }).find("window position must lie in [0, 1)"),
            std::string::npos);
  EXPECT_EQ(
      graph.sample_neighbors(at::arange(0, 10, at::kLong), 3, {.random_key = 1}).neighbors.numel(),
      local.sample_neighbors(at::arange(0, 10, at::kLong), 3, {.random_key = 1}).neighbors.numel());
}

TEST_F(GraphServiceTest, PulledRowsEqualTheOriginals) {
  for (const bool with_local_part : {false, true}) {
    const DistGraph graph(addresses(), client_options(), with_local_part ? &parts_[0] : nullptr);
    EXPECT_EQ(graph.num_nodes(), 3000);
    EXPECT_TRUE(graph.has("feat") && graph.has("label"));
    const at::Tensor ids = at::randperm(3000, at::kLong).slice(0, 0, 777);
    EXPECT_TRUE(at::equal(graph.gather("feat", ids), features_.index_select(0, ids)));
    EXPECT_TRUE(at::equal(graph.gather("label", ids), labels_.index_select(0, ids)));
  }
}

TEST_F(GraphServiceTest, PushThenPullRoundTrips) {
  const DistGraph graph(addresses(), client_options());
  const at::Tensor ids = at::tensor({5, 2999, 1500, 7}, at::kLong);
  const at::Tensor rows = at::randn({4, 12});
  graph.push("feat", ids, rows);
  EXPECT_TRUE(at::equal(graph.gather("feat", ids), rows));
  graph.push("feat", ids, features_.index_select(0, ids));  // restore for the other tests
}

// 12 MB of 4,004-byte rows against the fixture's 1 MB message limit: pushes are split into
// chunks as pulls are, and every row arrives whole and in place.
TEST_F(GraphServiceTest, WideRowsPushAndPullInChunksBelowTheMessageLimit) {
  DistGraph graph(addresses(), client_options());
  const DistTensor wide(graph, "wide", {at::kFloat, {1001}});
  const at::Tensor ids = at::randperm(3000, at::kLong);
  const at::Tensor rows = at::randn({3000, 1001});
  wide.push(ids, rows);
  EXPECT_TRUE(at::equal(wide.pull(ids), rows));
  const at::Tensor some = at::randint(0, 3000, {5000}, at::kLong);
  EXPECT_TRUE(at::equal(wide.pull(ids.index_select(0, some)), rows.index_select(0, some)));
}

TEST_F(GraphServiceTest, DistTensorIsCreatedOnEveryPartAndRoundTrips) {
  DistGraph graph(addresses(), client_options());
  const DistTensor embedding(graph, "embedding", {at::kFloat, {3}});
  EXPECT_EQ(embedding.num_rows(), 3000);
  const at::Tensor ids = at::tensor({0, 1499, 1500, 2999}, at::kLong);
  EXPECT_TRUE(at::equal(embedding.pull(ids), at::zeros({4, 3})));
  const at::Tensor rows = at::randn({4, 3});
  embedding.push(ids, rows);
  EXPECT_TRUE(at::equal(embedding.pull(ids), rows));
  // Attaching with the same schema keeps the rows; another schema is refused.
  const DistTensor again(graph, "embedding", {at::kFloat, {3}});
  EXPECT_TRUE(at::equal(again.pull(ids), rows));
  const std::string error = error_of([&] { DistTensor(graph, "embedding", {at::kFloat, {4}}); });
  EXPECT_NE(error.find("already exists with another schema"), std::string::npos) << error;
  EXPECT_NE(error_of([&] { DistTensor(graph, "bad/name", {at::kFloat, {1}}); }), "");
}

TEST_F(GraphServiceTest, DistEmbeddingAdamMatchesADenseReference) {
  DistGraph graph(addresses(), client_options());
  const DistEmbedding embedding(graph, "adam-emb", 4, {.kind = "adam", .lr = 0.1f, .eps = 1e-8f},
                                1.0f, 7);
  const at::Tensor ids = at::tensor({5, 2999, 5, 1500}, at::kLong);  // node 5 twice
  at::Tensor weight = embedding.pull(at::tensor({5, 1500, 2999}, at::kLong));
  EXPECT_TRUE((weight.abs() < 1).all().item<bool>() && weight.abs().sum().item<float>() > 0);
  at::Tensor m = at::zeros_like(weight), v = at::zeros_like(weight);
  for (int step = 1; step <= 3; ++step) {
    const at::Tensor grads = at::sin(at::arange(16, at::kFloat).reshape({4, 4}) * step);
    embedding.step(ids, grads);
    // Reference on the distinct rows {5, 1500, 2999}: summed gradients, Adam.
    const at::Tensor g = at::stack({grads[0] + grads[2], grads[3], grads[1]});
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g * g;
    weight = weight - 0.1 * (m / (1 - std::pow(0.9, step))) /
                          (at::sqrt(v / (1 - std::pow(0.999, step))) + 1e-8);
  }
  EXPECT_TRUE(
      at::allclose(embedding.pull(at::tensor({5, 1500, 2999}, at::kLong)), weight, 1e-4, 1e-5));
}

TEST_F(GraphServiceTest, DistEmbeddingUpdatesAreAtomicPerRow) {
  DistGraph graph(addresses(), client_options());
  const DistEmbedding embedding(graph, "adagrad-emb", 8, {.kind = "adagrad", .lr = 0.01f}, 0.1f);
  const at::Tensor ids = at::tensor({1, 2, 1600, 2998}, at::kLong);
  std::vector<std::thread> trainers;
  for (int t = 0; t < 4; ++t) {
    trainers.emplace_back([&] {
      for (int step = 0; step < 25; ++step) embedding.step(ids, at::ones({4, 8}));
    });
  }
  for (std::thread& trainer : trainers) trainer.join();
  // 100 squared unit gradients per element, none lost to a race.
  const DistTensor state(graph, "adagrad-emb-adagrad-sum", {at::kFloat, {8}});
  EXPECT_TRUE(at::equal(state.pull(ids), at::full({4, 8}, 100.0f)));
  EXPECT_TRUE(at::isfinite(embedding.pull(ids)).all().item<bool>());
  // Another trainer attaching to the embedding sees the same rows.
  DistGraph other(addresses(), client_options());
  const DistEmbedding attached(other, "adagrad-emb", 8, {.kind = "adagrad", .lr = 0.01f}, 0.1f);
  EXPECT_TRUE(at::equal(attached.pull(ids), embedding.pull(ids)));
  EXPECT_NE(error_of([&] {
              DistEmbedding(graph, "bad-emb", 8, {.kind = "sgd"});
            }).find("unknown sparse optimizer 'sgd'"),
            std::string::npos);
}

// A checkpoint's copy of an embedding (its rows and Adam's state) puts every server's rows back
// as they were, undoing the steps taken since; a copy of the wrong shape is refused by name.
TEST_F(GraphServiceTest, DistEmbeddingStateRoundTripsThroughACheckpointCopy) {
  DistGraph graph(addresses(), client_options());
  const DistEmbedding embedding(graph, "saved-emb", 4, {.kind = "adam", .lr = 0.1f}, 1.0f, 3);
  const at::Tensor ids = at::tensor({0, 1499, 1500, 2999}, at::kLong);  // both parts
  embedding.step(ids, at::ones({4, 4}));
  const std::map<std::string, at::Tensor> saved = embedding.state();
  ASSERT_EQ(saved.size(), 4u);  // rows, m, v, step
  EXPECT_EQ(saved.at("saved-emb").sizes(), (std::vector<int64_t>{graph.num_nodes(), 4}));
  EXPECT_EQ(saved.at("saved-emb-adam-step").sizes(), (std::vector<int64_t>{graph.num_nodes(), 1}));
  const at::Tensor rows = embedding.pull(ids);
  for (int step = 0; step < 3; ++step) embedding.step(ids, at::ones({4, 4}));  // after the copy
  ASSERT_FALSE(at::equal(embedding.pull(ids), rows));
  embedding.load_state(saved);
  EXPECT_TRUE(at::equal(embedding.pull(ids), rows));
  const DistTensor step(graph, "saved-emb-adam-step", {at::kFloat, {1}});
  EXPECT_TRUE(at::equal(step.pull(ids), at::ones({4, 1})));  // Adam's bias correction too
  std::map<std::string, at::Tensor> wrong = saved;
  wrong["saved-emb-adam-m"] = at::zeros({graph.num_nodes(), 3});
  const std::string error = error_of([&] { embedding.load_state(wrong); });
  EXPECT_NE(error.find("'saved-emb-adam-m' of embedding 'saved-emb'"), std::string::npos) << error;
  wrong = saved;
  wrong.erase("saved-emb-adam-v");
  EXPECT_NE(error_of([&] { embedding.load_state(wrong); }).find("holds no 'saved-emb-adam-v'"),
            std::string::npos);
}

TEST_F(GraphServiceTest, ASecondServerOnAPortInUseFailsInsteadOfSharingIt) {
  EXPECT_NE(error_of([&] {
              GraphServer({.partition_dir = dir_->path() / "parts",
                           .part = 0,
                           .address = servers_[0]->address(),
                           .token = testing::kClusterToken});
            }),
            "");
}

TEST_F(GraphServiceTest, MissingOrWrongTokenIsRefused) {
  const std::string address = servers_[0]->address();
  for (const char* token : {"", "not-the-token"}) {
    const GraphClient client(
        address, {.token = token, .deadline = std::chrono::seconds(5) * testing::kSlowdown});
    // A synchronous method and the two raw callback ones (raw_message.h).
    for (const std::string& error :
         {error_of([&] { client.health(); }), error_of([&] {
            client.pull("feat", at::tensor({int64_t{0}}), {at::kFloat, {12}});
          }),
          error_of([&] { client.sample_neighbors(at::tensor({int64_t{0}}), 5, {}); })}) {
      EXPECT_NE(error.find("UNAUTHENTICATED"), std::string::npos) << error;
      EXPECT_NE(error.find(address), std::string::npos) << error;
    }
  }
  EXPECT_EQ(GraphClient(address, client_options()).health(), "serving");
}

TEST_F(GraphServiceTest, MetadataGivesTheBookTheTensorsAndTheServersVersion) {
  const ServerMetadata metadata =
      GraphClient(servers_[1]->address(), {.token = testing::kClusterToken}).metadata();
  EXPECT_EQ(metadata.part, 1);
  EXPECT_EQ(metadata.num_parts, 2);
  EXPECT_EQ(metadata.node_range_ends.size(), 2u);
  EXPECT_EQ(metadata.tensors.count("feat"), 1u);
  EXPECT_FALSE(metadata.version.empty());
  EXPECT_NE(metadata.version, "unknown");  // the build's version reaches the servers
}

TEST_F(GraphServiceTest, InvalidRequestsAreRejectedAndTheServerKeepsServing) {
  // The default 64 MB client limit: it sends what the 1 MB server must refuse.
  const GraphClient client(servers_[0]->address(), {.token = testing::kClusterToken});
  const ServerMetadata metadata = client.metadata();
  const int64_t foreign = metadata.node_range_ends[0];  // first node of part 1
  std::string error = error_of([&] {
    client.sample_neighbors(at::tensor({int64_t{0}, foreign}, at::kLong), 5, {});
  });
  EXPECT_NE(error.find("INVALID_ARGUMENT"), std::string::npos) << error;
  EXPECT_NE(error.find(std::to_string(foreign)), std::string::npos) << error;
  error = error_of([&] {
    client.pull("feat", at::tensor({int64_t{-3}}, at::kLong), {at::kFloat, {12}});
  });
  EXPECT_NE(error.find("INVALID_ARGUMENT"), std::string::npos) << error;
  error = error_of([&] {
    client.pull("nope", at::tensor({int64_t{0}}, at::kLong), {at::kFloat, {}});
  });
  EXPECT_NE(error.find("no node tensor named 'nope'"), std::string::npos) << error;
  // Over the server's 1 MB message limit: sampling answers (refused by the server before it
  // samples) are asked for again in halves, which answer every seed as the whole would have;
  // pulled rows (sized exactly by the client) are refused before the server gathers.
  const sampling::SampledEdges halves =
      client.sample_neighbors(at::zeros({200000}, at::kLong), 5, {});
  ASSERT_EQ(halves.indptr.numel(), 200001);
  const sampling::SampledEdges one = client.sample_neighbors(at::zeros({1}, at::kLong), 5, {});
  EXPECT_TRUE(at::equal(halves.neighbors.view({200000, -1}).select(0, 199999), one.neighbors));
  error = error_of([&] {
    client.pull("feat", at::zeros({100000}, at::kLong), {at::kFloat, {12}});
  });
  EXPECT_NE(error.find("RESOURCE_EXHAUSTED"), std::string::npos) << error;
  EXPECT_NE(error.find("max_message_bytes (1048576) is below the"), std::string::npos) << error;
  EXPECT_EQ(client.health(), "serving");
  EXPECT_EQ(client.sample_neighbors(at::tensor({int64_t{1}}, at::kLong), 2, {}).indptr.numel(), 2);
}

TEST_F(GraphServiceTest, DeadServerFailsWithinTheDeadlineNamingIt) {
  const std::string address = fmt::format("127.0.0.1:{}", find_free_port());
  const GraphClient client(
      address,
      {.token = testing::kClusterToken, .deadline = std::chrono::seconds(2), .retries = 1});
  const auto start = std::chrono::steady_clock::now();
  const std::string error = error_of([&] { client.health(); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_NE(error.find(address), std::string::npos) << error;
  EXPECT_NE(error.find("UNAVAILABLE"), std::string::npos) << error;
}

}  // namespace
}  // namespace graphloom::distributed
