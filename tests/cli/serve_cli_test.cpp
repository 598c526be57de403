// `graphloom serve` end to end: a main and backup servers share one copy of the part in shared
// memory, answer the same, and leave nothing in /dev/shm (or the --shm-dir) after SIGTERM, a
// Shutdown RPC, or a SIGKILL followed by a restart.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "graphloom/base/shared_memory.h"
#include "graphloom/distributed/rpc/graph_client.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "support/test_support.h"

namespace graphloom::testing {
namespace {

class ServeCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    // 200k nodes x 512 features: part 0 is ~210 MB, far above a server's own memory (which
    // varies by tens of MB with gRPC's threads and buffers).
    ASSERT_EQ(
        run_graphloom("generate planted --out data --num-nodes 200000 --feat-dim 512", dir_->path())
            .exit_code,
        0);
    ASSERT_EQ(
        run_graphloom("partition --data data --parts 2 --method random --out parts", dir_->path())
            .exit_code,
        0);
  }
  static void TearDownTestSuite() { delete std::exchange(dir_, nullptr); }

  static std::string cluster_id(const std::string& test) {
    return fmt::format("test{}-{}", ::getpid(), test);
  }
  static std::vector<std::string> segments(const std::string& cluster,
                                           const std::string& directory = "/dev/shm") {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(directory)) {
      const std::string name = entry.path().filename().string();
      if (name.find("graphloom-" + cluster + "-") == 0) found.push_back(name);
    }
    return found;
  }
  static bool healthy(const std::string& address) {
    try {
      return distributed::GraphClient(address, {.deadline = std::chrono::seconds(2), .retries = 0})
                 .health() == "serving";
    } catch (const std::exception&) {
      return false;
    }
  }
  // kB of a /proc/<pid>/status field (RssAnon, RssShmem).
  static int64_t status_kb(int pid, const std::string& field) {
    std::ifstream in(fmt::format("/proc/{}/status", pid));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
    }
    return -1;
  }

  static TempDir* dir_;
};

TempDir* ServeCliTest::dir_ = nullptr;

TEST_F(ServeCliTest, MainAndBackupsShareOneCopyAndCleanUpOnSigterm) {
  const std::string cluster = cluster_id("share");
  // Port 0: every server takes a free port of its own and logs it (fixed ports could collide
  // with the ephemeral ports of other tests' connections).
  BackgroundProcess serve(
      {"serve", "--part-config", (dir_->path() / "parts").string(), "--part", "0", "--address",
       "127.0.0.1:0", "--num-servers", "4", "--insecure", "--cluster-id", cluster},
      {}, dir_->path() / "share.log");
  std::vector<std::string> addresses;
  ASSERT_TRUE(eventually(
      [&] {
        addresses.clear();
        const std::string log = serve.output();
        const std::regex served("served on (127\\.0\\.0\\.1:[0-9]+)");
        for (auto it = std::sregex_iterator(log.begin(), log.end(), served);
             it != std::sregex_iterator(); ++it) {
          addresses.push_back((*it)[1]);
        }
        return addresses.size() == 4;
      },
      60))
      << serve.output();
  for (const std::string& address : addresses) {
    ASSERT_TRUE(eventually([&] { return healthy(address); }, 60)) << address << serve.output();
  }
  // Every server answers the same rows; the backups read them from the main's memory.
  const distributed::ServerMetadata metadata =
      distributed::GraphClient(addresses[0], {}).metadata();
  const distributed::TensorSchema& schema = metadata.tensors.at("feat");
  const at::Tensor ids = at::arange(0, metadata.node_range_ends[0], at::kLong);
  const at::Tensor expected = distributed::GraphClient(addresses[0], {}).pull("feat", ids, schema);
  for (const std::string& address : addresses) {
    EXPECT_TRUE(
        at::equal(distributed::GraphClient(address, {}).pull("feat", ids, schema), expected));
  }
  // One copy: the part lives in /dev/shm once, and no server holds a private copy of it.
  int64_t shm_bytes = 0;
  for (const std::string& name : segments(cluster)) {
    shm_bytes += static_cast<int64_t>(std::filesystem::file_size("/dev/shm/" + name));
  }
  EXPECT_GT(shm_bytes, 200'000'000);  // well above the servers' own memory, which varies
  std::ifstream children(fmt::format("/proc/{}/task/{}/children", serve.pid(), serve.pid()));
  std::vector<int> servers;
  for (int pid; children >> pid;) servers.push_back(pid);
  ASSERT_EQ(servers.size(), 4u);
  const int64_t main_anon = status_kb(servers[0], "RssAnon");
  for (std::size_t i = 1; i < servers.size(); ++i) {
    EXPECT_GT(status_kb(servers[i], "RssShmem") * 1024, shm_bytes / 2);  // it read the part...
    EXPECT_LT(status_kb(servers[i], "RssAnon") * 1024,
              main_anon * 1024 + shm_bytes / 2);  // ...without copying it
  }
  std::cout << "part in shared memory " << shm_bytes / 1e6 << " MB; RssAnon of the servers (MB):";
  for (const int pid : servers) std::cout << " " << status_kb(pid, "RssAnon") / 1e3;
  std::cout << "\n";

  serve.kill(SIGTERM);
  EXPECT_EQ(serve.wait_for(30), 128 + SIGTERM) << serve.output();
  EXPECT_TRUE(segments(cluster).empty());
}

TEST_F(ServeCliTest, SigkillThenRestartLeavesNoStaleSegments) {
  const std::string cluster = cluster_id("kill");
  const std::string address = fmt::format("127.0.0.1:{}", free_port_range());
  const std::vector<std::string> args{"serve",
                                      "--part-config",
                                      (dir_->path() / "parts").string(),
                                      "--part",
                                      "1",
                                      "--address",
                                      address,
                                      "--insecure",
                                      "--cluster-id",
                                      cluster};
  {
    BackgroundProcess serve(args, {}, dir_->path() / "kill1.log");
    ASSERT_TRUE(eventually([&] { return healthy(address); }, 60)) << serve.output();
    serve.kill(SIGKILL);
    serve.wait_for(30);
  }
  EXPECT_FALSE(segments(cluster).empty());  // a SIGKILL leaves them behind...
  BackgroundProcess restarted(args, {}, dir_->path() / "kill2.log");
  ASSERT_TRUE(eventually([&] { return healthy(address); }, 60)) << restarted.output();
  distributed::GraphClient(address, {})
      .shutdown();  // ...the next start replaced them; now stop cleanly
  EXPECT_EQ(restarted.wait_for(30), 0) << restarted.output();
  EXPECT_TRUE(segments(cluster).empty());
}

// `graphloom --shm-dir DIR serve`: the part's segments are files in DIR, none in /dev/shm, and
// a clean stop leaves DIR empty. A directory that does not exist is a usage error.
TEST_F(ServeCliTest, ShmDirHoldsThePartAndIsLeftEmpty) {
  const std::string cluster = cluster_id("shmdir");
  const std::filesystem::path shm = dir_->path() / "shm";
  std::filesystem::create_directories(shm);
  const std::string address = fmt::format("127.0.0.1:{}", free_port_range());
  BackgroundProcess serve(
      {"--shm-dir", shm.string(), "serve", "--part-config", (dir_->path() / "parts").string(),
       "--part", "0", "--address", address, "--insecure", "--cluster-id", cluster},
      {}, dir_->path() / "shmdir.log");
  ASSERT_TRUE(eventually([&] { return healthy(address); }, 60)) << serve.output();
  EXPECT_FALSE(segments(cluster, shm.string()).empty());
  EXPECT_TRUE(segments(cluster).empty());
  if (!shared_memory_on_huge_pages(shm.string())) {
    EXPECT_NE(serve.output().find("is shared from " + shm.string() + " on 4 KB pages"),
              std::string::npos)
        << serve.output();
  }
  distributed::GraphClient(address, {}).shutdown();
  EXPECT_EQ(serve.wait_for(30), 0) << serve.output();
  EXPECT_TRUE(segments(cluster, shm.string()).empty());

  const auto result = run_graphloom(
      "--shm-dir /nonexistent/graphloom-shm serve --part-config parts --part 0 --insecure",
      dir_->path());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("/nonexistent/graphloom-shm"), std::string::npos) << result.output;
}

TEST_F(ServeCliTest, RefusesToStartWithoutTokenOrOnABadAddress) {
  auto result =
      run_graphloom("serve --part-config parts --part 0 --address 127.0.0.1:0", dir_->path());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("--token-file is required"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("--insecure serves without one"), std::string::npos)
      << result.output;
  const std::string cluster = cluster_id("refused");
  result = run_graphloom(
      "serve --part-config parts --part 0 --insecure --address 203.0.113.7:5000 --cluster-id " +
          cluster,
      dir_->path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("cannot listen on '203.0.113.7:5000'"), std::string::npos)
      << result.output;
  // The failed main server left its error for the trainers of the machine, and nothing else.
  EXPECT_EQ(segments(cluster), std::vector<std::string>{"graphloom-" + cluster + "-p0-failure"});
  result = run_graphloom("serve --part-config parts --part 5 --insecure --cluster-id " + cluster,
                         dir_->path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("part 5 does not exist"), std::string::npos) << result.output;
  distributed::SharedPartition::remove_segments(cluster, 0);
  distributed::SharedPartition::remove_segments(cluster, 5);
}

}  // namespace
}  // namespace graphloom::testing
