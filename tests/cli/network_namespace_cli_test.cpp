// Two "machines" as two network namespaces joined by a veth pair (issue 8's optional run):
// partitioned training across them completes, and cutting the link mid-run ends both trainers
// with an error naming the unreachable server instead of a hang. Needs root and `ip netns`;
// skipped where either is missing.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>

#include "support/test_support.h"

namespace graphloom::testing {
namespace {

// Namespaces <name>a and <name>b, 10.213.0.1 and 10.213.0.2 on the two ends of one veth pair;
// removed (with the pair) on destruction.
class NamespacePair {
 public:
  explicit NamespacePair(std::string name) : name_(std::move(name)) {
    ok_ = ip("netns add " + a()) && ip("netns add " + b()) &&
          ip(fmt::format("link add {} type veth peer name {}", link_a(), link_b())) &&
          ip(fmt::format("link set {} netns {}", link_a(), a())) &&
          ip(fmt::format("link set {} netns {}", link_b(), b())) &&
          ip(fmt::format("-n {} addr add 10.213.0.1/24 dev {}", a(), link_a())) &&
          ip(fmt::format("-n {} addr add 10.213.0.2/24 dev {}", b(), link_b())) &&
          ip(fmt::format("-n {} link set {} up", a(), link_a())) &&
          ip(fmt::format("-n {} link set {} up", b(), link_b())) &&
          ip(fmt::format("-n {} link set lo up", a())) &&
          ip(fmt::format("-n {} link set lo up", b()));
  }
  ~NamespacePair() {
    ip("netns del " + a());
    ip("netns del " + b());
  }
  bool ok() const { return ok_; }
  std::string a() const { return name_ + "a"; }
  std::string b() const { return name_ + "b"; }
  std::vector<std::string> in(int machine) const {
    return {"/usr/sbin/ip", "netns", "exec", machine == 0 ? a() : b()};
  }
  bool cut() const { return ip(fmt::format("-n {} link set {} down", a(), link_a())); }

 private:
  std::string link_a() const { return name_ + "x"; }
  std::string link_b() const { return name_ + "y"; }
  static bool ip(const std::string& arguments) {
    return std::system(("/usr/sbin/ip " + arguments + " >/dev/null 2>&1").c_str()) == 0;
  }
  std::string name_;
  bool ok_ = false;
};

class NetworkNamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
    namespaces_ = std::make_unique<NamespacePair>(fmt::format("gl{}", ::getpid() % 100000));
    if (!namespaces_->ok()) GTEST_SKIP() << "`ip netns` / veth pairs are not available here";
    ASSERT_TRUE(make_quick_partition(dir_.path()));
    port_ = free_port_range(11);
    std::ofstream ip(dir_ / "ip.txt");
    ip << "10.213.0.1 " << port_ << "\n10.213.0.2 " << port_ << "\n";
    cluster_ = fmt::format("test{}-netns", ::getpid());
    for (int machine = 0; machine < 2; ++machine) {
      servers_.push_back(std::make_unique<BackgroundProcess>(
          std::vector<std::string>{"serve", "--part-config", (dir_ / "parts").string(), "--part",
                                   std::to_string(machine), "--address",
                                   fmt::format("10.213.0.{}:{}", machine + 1, port_),
                                   "--cluster-id", fmt::format("{}{}", cluster_, machine)},
          std::vector<std::string>{"GRAPHLOOM_TOKEN=t0ken"},
          dir_ / fmt::format("server{}.log", machine), namespaces_->in(machine)));
    }
    for (auto& server : servers_) {
      ASSERT_TRUE(
          eventually([&] { return server->output().find("served on") != std::string::npos; }, 60))
          << server->output();
    }
  }
  void TearDown() override {
    for (auto& server : servers_) {
      server->kill(SIGTERM);
      server->wait_for(30);
    }
  }
  // Trainer `rank` on machine `rank` (one trainer per machine).
  std::unique_ptr<BackgroundProcess> trainer(int rank, int master, const std::string& epochs) {
    std::vector<std::string> args{"train",
                                  "--part-config",
                                  (dir_ / "parts").string(),
                                  "--ip-config",
                                  (dir_ / "ip.txt").string(),
                                  "--machine",
                                  std::to_string(rank),
                                  "--cluster-id",
                                  fmt::format("{}{}", cluster_, rank),
                                  "--no-progress"};
    const std::vector<std::string> flags = quick_training_flags();
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--epochs", epochs, "--dist-timeout", "20", "--rpc-timeout", "10"});
    return std::make_unique<BackgroundProcess>(
        args,
        std::vector<std::string>{fmt::format("RANK={}", rank), "WORLD_SIZE=2", "LOCAL_RANK=0",
                                 "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=10.213.0.1",
                                 fmt::format("MASTER_PORT={}", master), "OMP_NUM_THREADS=1",
                                 "GRAPHLOOM_TOKEN=t0ken"},
        dir_ / fmt::format("trainer{}-{}.log", rank, epochs), namespaces_->in(rank));
  }

  TempDir dir_;
  std::unique_ptr<NamespacePair> namespaces_;
  std::vector<std::unique_ptr<BackgroundProcess>> servers_;
  std::string cluster_;
  int port_ = 0;
};

TEST_F(NetworkNamespaceTest, TrainingAcrossTwoNamespacesCompletes) {
  const int master = free_port_range();
  auto first = trainer(0, master, "3");
  auto second = trainer(1, master, "3");
  ASSERT_EQ(first->wait_for(300), 0) << first->output();
  ASSERT_EQ(second->wait_for(60), 0) << second->output();
  std::smatch match;
  const std::string output = first->output();
  ASSERT_TRUE(std::regex_search(output, match, std::regex("test accuracy ([0-9.]+)"))) << output;
  EXPECT_GT(std::stod(match[1]), 0.9) << output;
}

TEST_F(NetworkNamespaceTest, CuttingTheLinkMidRunEndsBothTrainersWithAClearError) {
  const int master = free_port_range();
  auto first = trainer(0, master, "1000");
  auto second = trainer(1, master, "1000");
  ASSERT_TRUE(
      eventually([&] { return first->output().find("epoch   1") != std::string::npos; }, 300))
      << first->output();
  ASSERT_TRUE(namespaces_->cut());
  const auto cut_at = std::chrono::steady_clock::now();
  // The RPC deadline is 10 s and --dist-timeout 20 s: both must be over well within 120 s.
  const int first_code = first->wait_for(120);
  const int second_code = second->wait_for(120);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cut_at).count();
  EXPECT_NE(first_code, -1) << "rank 0 still running: " << first->output();
  EXPECT_NE(second_code, -1) << "rank 1 still running: " << second->output();
  EXPECT_NE(first_code, 0);
  EXPECT_NE(second_code, 0);
  // Each names what it lost: the other machine's server, or its peer in the collective.
  for (const auto* process : {first.get(), second.get()}) {
    const std::string output = process->output();
    const auto error = output.find("graphloom: error:");
    std::cout << (error == std::string::npos ? "(no error line)" : output.substr(error)) << "\n";
    EXPECT_TRUE(output.find("10.213.0.") != std::string::npos ||
                output.find("timed out") != std::string::npos ||
                output.find("Timed out") != std::string::npos)
        << output;
  }
  std::cout << "link cut: both trainers exited after " << seconds << " s\n";
}

}  // namespace
}  // namespace graphloom::testing
