// Collectives, shared tensors and rendezvous errors of ProcessGroup, with ranks as threads.
#include "graphloom/distributed/runtime/process_group.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <filesystem>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/dist_fixtures.h"
#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

using testing::run_ranks;

TEST(ProcessGroup, AllreduceBroadcastBarrier) {
  run_ranks(3, [](ProcessGroup& group) {
    const int r = group.rank();
    at::Tensor sum = at::full({4}, r + 1, at::kFloat);
    group.allreduce(sum);
    EXPECT_TRUE(at::equal(sum, at::full({4}, 6, at::kFloat)));
    at::Tensor low = at::full({1}, 10 + r, at::kLong);
    at::Tensor high = low.clone();
    group.allreduce(low, ReduceOp::kMin);
    group.allreduce(high, ReduceOp::kMax);
    EXPECT_EQ(low.item<int64_t>(), 10);
    EXPECT_EQ(high.item<int64_t>(), 12);
    at::Tensor value = at::full({2}, r == 2 ? 7.5 : 0.0, at::kDouble);
    group.broadcast(value, /*root=*/2);
    EXPECT_DOUBLE_EQ(value[1].item<double>(), 7.5);
    CollectiveWork work = group.allreduce_async(at::ones({3}));
    work.wait();
    group.barrier();
    EXPECT_TRUE(group.single_host());
    EXPECT_EQ(group.job_id().size(), 16u);
  });
}

// What NCCL does for a GPU's tensors, with a second Gloo group standing in on the CPU: the
// attached backend connects over its own store keys and carries that device's collectives.
TEST(ProcessGroup, AttachedDeviceBackendCarriesThatDevicesCollectives) {
  run_ranks(2, [](ProcessGroup& group) {
    const at::Tensor host = at::ones({1});
    EXPECT_EQ(group.backend_name(host), "gloo");
    group.attach_device(at::kCPU, DeviceBackend::kGloo, "dist_backend");
    EXPECT_EQ(group.backend_name(host), "gloo (device)");
    group.attach_device(at::kCPU, DeviceBackend::kGloo, "dist_backend");  // again: nothing
    at::Tensor sum = at::full({3}, group.rank() + 1.0, at::kFloat);
    group.allreduce(sum);
    EXPECT_TRUE(at::equal(sum, at::full({3}, 3.0, at::kFloat)));
    at::Tensor value = at::full({1}, group.rank() == 1 ? 4.0 : 0.0, at::kDouble);
    group.broadcast(value, /*root=*/1);
    EXPECT_EQ(value.item<double>(), 4.0);
    at::Tensor gradients = at::full({5}, 2.0 * group.rank(), at::kFloat);
    group.allreduce_async(gradients).wait();
    EXPECT_TRUE(at::equal(gradients, at::full({5}, 2.0, at::kFloat)));
    group.barrier();
    const std::string error = testing::error_of(
        [&] { group.attach_device(at::kCPU, DeviceBackend::kNccl, "dist_backend"); });
    EXPECT_NE(error.find("gloo (device) on cpu is attached already"), std::string::npos) << error;
  });
}

TEST(ProcessGroup, JobIdIsSharedAndFresh) {
  std::vector<std::string> ids(2);
  run_ranks(2, [&](ProcessGroup& group) { ids[group.rank()] = group.job_id(); });
  EXPECT_EQ(ids[0], ids[1]);
  std::string next;
  run_ranks(2, [&](ProcessGroup& group) {
    if (group.rank() == 0) next = group.job_id();
  });
  EXPECT_NE(next, ids[0]);
}

TEST(ProcessGroup, SharedTensorIsOneMemoryAndLeavesNothingInDevShm) {
  std::string job;
  run_ranks(2, [&](ProcessGroup& group) {
    at::Tensor shared = group.shared_tensor("test", {4, 2}, at::kFloat);
    job = group.job_id();
    shared[group.rank()].fill_(group.rank() + 1);  // each rank writes its own row
    group.barrier();
    EXPECT_FLOAT_EQ(shared[0][0].item<float>(), 1.0f);  // the other rank's write is visible
    EXPECT_FLOAT_EQ(shared[1][1].item<float>(), 2.0f);
    group.barrier();
  });
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    EXPECT_EQ(entry.path().filename().string().find(job), std::string::npos) << entry.path();
  }
}

TEST(ProcessGroup, JoinsAStoreHostedByTheLauncher) {
  // As under torchrun: the agent owns MASTER_PORT; every rank is a client of its store.
  c10d::TCPStoreOptions options;
  options.port = 0;
  options.isServer = true;
  options.waitWorkers = false;
  const auto agent_store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
  std::vector<std::thread> ranks;
  std::vector<float> sums(2);
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      ProcessEnvironment env;
      env.rank = rank;
      env.world_size = 2;
      env.master_port = agent_store->getPort();
      env.launcher_hosts_store = true;
      env.store_prefix = "/worker/attempt_0";
      const auto group = ProcessGroup::connect(env, {.timeout = std::chrono::seconds(20)});
      at::Tensor value = at::ones({1});
      group->allreduce(value);
      sums[rank] = value.item<float>();
    });
  }
  for (std::thread& rank : ranks) rank.join();
  EXPECT_EQ(sums, (std::vector<float>{2, 2}));
}

TEST(ProcessGroup, PortInUseIsAClearError) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ProcessEnvironment env;
  env.world_size = 2;
  env.master_port = ntohs(address.sin_port);
  const std::string error =
      testing::error_of([&] { ProcessGroup::connect(env, {.timeout = std::chrono::seconds(5)}); });
  ::close(fd);
  EXPECT_NE(error.find(fmt::format("port {}", env.master_port)), std::string::npos) << error;
  EXPECT_NE(error.find("in use"), std::string::npos) << error;
}

TEST(ProcessGroup, UnreachableRankZeroTimesOutWithTheAddress) {
  ProcessEnvironment env;
  env.rank = 1;
  env.world_size = 2;
  env.master_port = find_free_port();  // nobody listens
  const std::string error =
      testing::error_of([&] { ProcessGroup::connect(env, {.timeout = std::chrono::seconds(2)}); });
  EXPECT_NE(error.find(fmt::format("127.0.0.1:{}", env.master_port)), std::string::npos) << error;
}

TEST(ProcessGroup, RankShareCoversEveryItemOnce) {
  for (const int world : {1, 2, 3, 7}) {
    int64_t expected_begin = 0;
    for (int rank = 0; rank < world; ++rank) {
      const auto [begin, end] = rank_share(100, rank, world);
      EXPECT_EQ(begin, expected_begin);
      EXPECT_LE(end - begin, 100 / world + 1);
      expected_begin = end;
    }
    EXPECT_EQ(expected_begin, 100);
  }
}

}  // namespace
}  // namespace graphloom::distributed
