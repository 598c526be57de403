// What a client holding the token can send a graph server, and what it gets back: every method
// answers a payload that does not decode with INVALID_ARGUMENT naming the method; sampling
// requests whose answer would pass the message limit or the request budget (fanouts at the
// int64 edges, a hub asked for millions of times) are refused with RESOURCE_EXHAUSTED naming the
// limit, before the server allocates; a client asks for a refused answer again in halves; and
// the server answers valid requests correctly after.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "distributed/rpc/raw_request.h"
#include "graphloom/distributed/rpc/graph_client.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/distributed/rpc/part_sampling.h"
#include "graphloom/io/generators.h"
#include "graphloom/partition/assign.h"
#include "graphloom_proto/graph_service.pb.h"
#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

using testing::raw_request;
using testing::RawReply;

class RequestLimitsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const io::Dataset data = io::generate_planted(
        {.num_nodes = 3000, .num_classes = 4, .avg_degree = 8, .feat_dim = 12, .seed = 5});
    partition::write_partitions(data, partition::assign_random(data.num_nodes(), 2, 7), 2,
                                dir_->path() / "parts", {.method = "random"});
    part_ = new partition::Partition(partition::load_partition(dir_->path() / "parts", 0));
    server_ = new GraphServer({.partition_dir = dir_->path() / "parts",
                               .part = 0,
                               .token = testing::kClusterToken,
                               .max_message_bytes = 1 << 20});
  }
  static void TearDownTestSuite() {
    delete std::exchange(server_, nullptr);
    delete std::exchange(part_, nullptr);
    delete std::exchange(dir_, nullptr);
  }

  static RawReply sample(const at::Tensor& seeds, int64_t fanout, bool replace) {
    rpc::SampleRequest request;
    request.set_seeds(std::string(static_cast<const char*>(seeds.data_ptr()), seeds.nbytes()));
    request.set_fanout(fanout);
    request.set_replace(replace);
    return raw_request(server_->address(), "SampleNeighbors", request.SerializeAsString());
  }

  // A valid request is answered as the part's own sampling kernel answers it.
  static void expect_valid_sampling_still_correct() {
    const GraphClient client(server_->address(), {.token = testing::kClusterToken});
    const at::Tensor seeds = at::arange(0, 50, at::kLong);
    const sampling::SampleOptions options{.random_key = 11};
    const sampling::SampledEdges served = client.sample_neighbors(seeds, 4, options);
    const sampling::SampledEdges expected =
        sample_part_neighbors(*part_, 0, seeds, 4, options, "part 0");
    EXPECT_TRUE(at::equal(served.indptr, expected.indptr));
    EXPECT_TRUE(at::equal(served.neighbors, expected.neighbors));
    EXPECT_EQ(client.health(), "serving");
  }

  static testing::TempDir* dir_;
  static partition::Partition* part_;
  static GraphServer* server_;
};

testing::TempDir* RequestLimitsTest::dir_ = nullptr;
partition::Partition* RequestLimitsTest::part_ = nullptr;
GraphServer* RequestLimitsTest::server_ = nullptr;

TEST_F(RequestLimitsTest, EveryMethodAnswersAnUndecodablePayloadNamingIt) {
  // A truncated varint: no protobuf message parses from it.
  for (const char* method : {"SampleNeighbors", "Pull", "Push", "CreateTensor", "SparseUpdate",
                             "Metadata", "Health", "Shutdown"}) {
    const RawReply reply = raw_request(server_->address(), method, "\xff\xff\xff");
    EXPECT_EQ(reply.code, grpc::StatusCode::INVALID_ARGUMENT) << method << ": " << reply.message;
    EXPECT_NE(reply.message.find(std::string(method) + ": the request is not a valid"),
              std::string::npos)
        << reply.message;
  }
  expect_valid_sampling_still_correct();
}

TEST_F(RequestLimitsTest, FanoutsWithReplacementAtTheInt64EdgesAreRefusedByName) {
  const at::Tensor seeds = at::zeros({4}, at::kLong);
  for (const int64_t fanout : {int64_t{1} << 62, (int64_t{1} << 62) + 1, int64_t{1000000000}}) {
    const RawReply reply = sample(seeds, fanout, /*replace=*/true);
    EXPECT_EQ(reply.code, grpc::StatusCode::RESOURCE_EXHAUSTED) << reply.message;
    EXPECT_NE(reply.message.find("fanout with replacement must be at most 1048576"),
              std::string::npos)
        << reply.message;
  }
  expect_valid_sampling_still_correct();
}

TEST_F(RequestLimitsTest, AnAnswerOverTheBudgetIsRefusedBeforeItIsBuilt) {
  // 100k copies of one node fit the 1 MiB request; all its neighbors, 100k times, do not fit
  // the answer.
  const RawReply all = sample(at::zeros({100000}, at::kLong), -1, false);
  EXPECT_EQ(all.code, grpc::StatusCode::RESOURCE_EXHAUSTED) << all.message;
  EXPECT_NE(all.message.find("max_message_bytes (1048576 bytes: 65536 picks of 16 bytes) is "
                             "below the picks of 100000 seeds with fanout -1"),
            std::string::npos)
      << all.message;
  // With replacement at the largest fanout: one seed fits no 1 MiB answer.
  const RawReply one = sample(at::zeros({1}, at::kLong), 1 << 20, true);
  EXPECT_EQ(one.code, grpc::StatusCode::RESOURCE_EXHAUSTED) << one.message;
  expect_valid_sampling_still_correct();
}

// All-neighbor picks (fanout -1: LABOR-*, full-neighbor inference) are budgeted by a guess,
// which a part's hubs pass: the client asks again in halves and gets what the whole asked for.
TEST_F(RequestLimitsTest, AClientAsksForAnAnswerOverTheLimitInHalves) {
  const int64_t hub = part_->graph.in_degrees().argmax().item<int64_t>();
  const at::Tensor seeds = at::full({20000}, hub + part_->node_begin, at::kLong);
  // 14 neighbors a seed: 5,000 seeds (fewer than the client's 32-pick guess puts in one call)
  // already pass the 1 MiB answer.
  EXPECT_EQ(sample(seeds.slice(0, 0, 5000), -1, false).code, grpc::StatusCode::RESOURCE_EXHAUSTED);
  const GraphClient client(server_->address(), {.token = testing::kClusterToken});
  const sampling::SampleOptions options{.random_key = 3};
  const sampling::SampledEdges served = client.sample_neighbors(seeds, -1, options);
  const sampling::SampledEdges expected =
      sample_part_neighbors(*part_, 0, seeds, -1, options, "part 0");
  EXPECT_TRUE(at::equal(served.indptr, expected.indptr));
  EXPECT_TRUE(at::equal(served.neighbors, expected.neighbors));
  EXPECT_TRUE(at::equal(served.edge_ids, expected.edge_ids));
  // What one seed cannot fit stays refused, naming the limit.
  const std::string message = testing::error_of(
      [&] { client.sample_neighbors(seeds.slice(0, 0, 1), 1 << 20, {.replace = true}); });
  EXPECT_NE(message.find("max_message_bytes"), std::string::npos) << message;
  EXPECT_THROW(client.sample_neighbors(seeds.slice(0, 0, 1), 1 << 20, {.replace = true}),
               MessageTooLarge);
  // A fanout no seed can be answered with is refused before any call (not halved 20,000 times).
  EXPECT_THROW(client.sample_neighbors(seeds, (1 << 20) + 1, {.replace = true}), LimitError);
  expect_valid_sampling_still_correct();
}

TEST_F(RequestLimitsTest, ARequestBudgetBelowTheMessageLimitIsTheOneNamed) {
  GraphServer server({.partition_dir = dir_->path() / "parts",
                      .part = 0,
                      .token = testing::kClusterToken,
                      .max_message_bytes = 64 << 20,
                      .max_request_bytes = 1 << 20});
  rpc::PullRequest pull;
  pull.set_name("feat");
  const at::Tensor ids = at::zeros({30000}, at::kLong);  // 30000 x 48 bytes > 1 MiB
  pull.set_ids(std::string(static_cast<const char*>(ids.data_ptr()), ids.nbytes()));
  const RawReply reply = raw_request(server.address(), "Pull", pull.SerializeAsString());
  EXPECT_EQ(reply.code, grpc::StatusCode::RESOURCE_EXHAUSTED) << reply.message;
  EXPECT_NE(reply.message.find("max_request_bytes (1048576) is below the 1440000 bytes of 30000 "
                               "rows of 'feat'"),
            std::string::npos)
      << reply.message;
  EXPECT_THROW(GraphServer({.partition_dir = dir_->path() / "parts",
                            .token = testing::kClusterToken,
                            .max_request_bytes = 1000}),
               OptionError);
}

}  // namespace
}  // namespace graphloom::distributed
