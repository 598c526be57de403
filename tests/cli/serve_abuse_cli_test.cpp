// Load and abuse: one `graphloom serve` on loopback, 20 clients that interleave valid sampling
// and pull requests (each checked against the part's own kernel and rows) with the requests
// that once crashed or exhausted a server — fanouts at the int64 edges with replacement, a hub
// asked for a million times with all its neighbors, pulls far past the message limit,
// undecodable payloads to every method, wrong tokens, foreign ids. Bounded in count and time.
// Every valid request is answered correctly, every abusive one refused with a message, and the
// server is alive at the end with its memory back near where it was before the abuse.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <atomic>
#include <fstream>
#include <regex>
#include <thread>

#include "distributed/rpc/raw_request.h"
#include "graphloom/distributed/rpc/graph_client.h"
#include "graphloom/distributed/rpc/part_sampling.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom_proto/graph_service.pb.h"
#include "support/test_support.h"

namespace graphloom::testing {
namespace {

constexpr int kClients = 20;
constexpr int kRoundsPerClient = 12;

int64_t resident_kb(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

std::string bytes_of(const at::Tensor& tensor) {
  return {static_cast<const char*>(tensor.data_ptr()), tensor.nbytes()};
}

std::string sample_request(const at::Tensor& seeds, int64_t fanout, bool replace) {
  rpc::SampleRequest request;
  request.set_seeds(bytes_of(seeds));
  request.set_fanout(fanout);
  request.set_replace(replace);
  return request.SerializeAsString();
}

std::string pull_request(const at::Tensor& ids) {
  rpc::PullRequest request;
  request.set_name("feat");
  request.set_ids(bytes_of(ids));
  return request.SerializeAsString();
}

// The abusive requests, by kind; each must be refused with a message, never answered OK.
RawReply abuse(const std::string& address, int kind, int64_t foreign) {
  static const char* kMethods[] = {"SampleNeighbors", "Pull",     "Push",   "CreateTensor",
                                   "SparseUpdate",    "Metadata", "Health", "Shutdown"};
  switch (kind % 8) {
    case 0:  // once: the pick count wrapped to 0, and the kernel wrote 2^62 picks into it
      return raw_request(address, "SampleNeighbors",
                         sample_request(at::zeros({4}, at::kLong), int64_t{1} << 62, true));
    case 1:  // once: two 8 GB arrays filled, then the OOM killer
      return raw_request(address, "SampleNeighbors",
                         sample_request(at::zeros({1}, at::kLong), 1000000000, true));
    case 2:  // once: the whole answer built before any size check
      return raw_request(address, "SampleNeighbors",
                         sample_request(at::zeros({1000000}, at::kLong), -1, false));
    case 3:
      return raw_request(address, "Pull", pull_request(at::zeros({4000000}, at::kLong)));
    case 4:
      return raw_request(address, kMethods[(kind / 8) % 8], "\xff\xff\xff");
    case 5:
      return raw_request(address, "Pull", pull_request(at::zeros({1}, at::kLong)), "wrong");
    case 6:
      return raw_request(address, "SampleNeighbors",
                         sample_request(at::tensor({foreign}, at::kLong), 3, false));
    default: {
      rpc::CreateTensorRequest request;
      // 10,000 rows of 2^20 float64: 84 GB, more than this machine has.
      request.mutable_schema()->set_name("huge");
      request.mutable_schema()->set_dtype("float64");
      request.mutable_schema()->add_row_shape(int64_t{1} << 20);
      return raw_request(address, "CreateTensor", request.SerializeAsString());
    }
  }
}

TEST(ServeAbuse, TwentyClientsMixingValidAndAbusiveRequestsGetCorrectAnswersAndRefusals) {
  const TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --out data --num-nodes 20000 --avg-degree 10 "
                          "--feat-dim 32",
                          dir.path())
                .exit_code,
            0);
  ASSERT_EQ(run_graphloom("partition --data data --parts 2 --method random --out parts", dir.path())
                .exit_code,
            0);
  const partition::Partition part = partition::load_partition(dir.path() / "parts", 0);
  const int64_t owned = part.node_end - part.node_begin;
  BackgroundProcess serve({"serve", "--part-config", (dir.path() / "parts").string(), "--part", "0",
                           "--address", "127.0.0.1:0"},
                          {fmt::format("GRAPHLOOM_TOKEN={}", kClusterToken)},
                          dir.path() / "serve.log");
  std::string address;
  ASSERT_TRUE(eventually(
      [&] {
        std::smatch match;
        const std::string log = serve.output();
        if (!std::regex_search(log, match, std::regex("served on (127\\.0\\.0\\.1:[0-9]+)"))) {
          return false;
        }
        address = match[1];
        return true;
      },
      60 * kSlowdown))
      << serve.output();
  const distributed::GraphClient client(address, {.token = kClusterToken});
  ASSERT_EQ(client.health(), "serving");
  const distributed::TensorSchema schema = client.metadata().tensors.at("feat");

  // Every valid request: its answer equals the part's own.
  std::atomic<int64_t> wrong{0}, valid{0}, refused{0}, answered_abuse{0};
  const auto valid_round = [&](uint64_t key) {
    const at::Tensor seeds = at::randint(owned, {64}, at::kLong);
    const sampling::SampleOptions options{.random_key = key};
    const sampling::SampledEdges served = client.sample_neighbors(seeds, 5, options);
    const sampling::SampledEdges expected =
        distributed::sample_part_neighbors(part, 0, seeds, 5, options, "part 0");
    const bool same_sample = at::equal(served.indptr, expected.indptr) &&
                             at::equal(served.neighbors, expected.neighbors);
    const at::Tensor rows = client.pull("feat", seeds, schema);
    const bool same_rows = at::equal(rows, part.features.at("feat").index_select(0, seeds));
    wrong += !(same_sample && same_rows);
    ++valid;
  };
  // Warm-up: every row and column touched once, then the same load without abuse.
  client.pull("feat", at::arange(owned, at::kLong), schema);
  client.sample_neighbors(at::arange(owned, at::kLong), -1, {});
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int round = 0; round < kRoundsPerClient; ++round) valid_round(c * 1000 + round);
    });
  }
  for (std::thread& thread : clients) thread.join();
  clients.clear();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // idle: the server trims
  const int64_t idle_kb = resident_kb(serve.pid());

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120) * kSlowdown;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int round = 0; round < kRoundsPerClient; ++round) {
        if (std::chrono::steady_clock::now() > deadline) return;
        valid_round(100000 + c * 1000 + round);
        const RawReply reply = abuse(address, c * kRoundsPerClient + round, part.node_end);
        const bool clear = reply.code != grpc::StatusCode::OK && !reply.message.empty();
        if (!clear) {
          ADD_FAILURE() << "abuse " << (c * kRoundsPerClient + round) % 8 << " answered "
                        << static_cast<int>(reply.code) << ": '" << reply.message << "'";
        }
        (clear ? refused : answered_abuse) += 1;
      }
    });
  }
  for (std::thread& thread : clients) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(answered_abuse.load(), 0);
  EXPECT_EQ(refused.load(), kClients * kRoundsPerClient);
  EXPECT_EQ(serve.wait_for(0), -1) << "the server died:\n" << serve.output();
  ASSERT_EQ(client.health(), "serving");
  valid_round(7);
  EXPECT_EQ(wrong.load(), 0);
  // Memory: back within 25% of the idle figure once the server is idle again.
  int64_t after_kb = 0;
  EXPECT_TRUE(eventually(
      [&] {
        after_kb = resident_kb(serve.pid());
        return after_kb <= idle_kb * 5 / 4;
      },
      10))
      << "resident " << after_kb << " kB after the abuse, " << idle_kb << " kB idle before";
  std::cout << "server resident memory: " << idle_kb / 1024 << " MB idle, " << after_kb / 1024
            << " MB after " << refused.load() << " abusive and " << valid.load()
            << " valid requests\n";
  serve.kill(SIGTERM);
  serve.wait_for(30);
}

}  // namespace
}  // namespace graphloom::testing
