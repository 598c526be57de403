// `graphloom train` data-parallel, end to end: --nproc, torchrun-style ranks, failures that
// must end the job quickly (a killed rank, a killed trainer of --nproc, a port in use), and
// accuracy on Cora next to the single-process run.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "support/test_support.h"

namespace graphloom::testing {
namespace {

// A loopback port with a listener on it, for the duration of the object.
class BusyPort {
 public:
  BusyPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    socklen_t length = sizeof(address);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    ::listen(fd_, 1);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~BusyPort() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

double value_after(const std::string& output, const std::string& label) {
  std::smatch match;
  if (!std::regex_search(output, match, std::regex(label + " ([0-9.]+)"))) return -1;
  return std::stod(match[1]);
}

std::vector<int> children_of(int pid) {
  std::ifstream in(fmt::format("/proc/{}/task/{}/children", pid, pid));
  std::vector<int> children;
  for (int child; in >> child;) children.push_back(child);
  return children;
}

bool running(int pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string skip, state;
  return stat >> skip >> skip >> state && state != "Z";
}

TEST(DataParallelCli, NprocTrainsWithReplicasInSync) {
  TempDir dir;
  const auto result = run_graphloom(
      "train --nproc 2 --epochs 2 --check-sync 1 --bucket-cap-mb 0.05 --no-progress "
      "--metrics-log log.jsonl",
      dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("data-parallel: 2 ranks"), std::string::npos) << result.output;
  EXPECT_GT(value_after(result.output, "test accuracy"), 0.9) << result.output;
  std::ifstream log(dir / "log.jsonl");
  int lines = 0;
  for (std::string line; std::getline(log, line);) ++lines;
  EXPECT_EQ(lines, 2);  // rank 0 alone writes the log
}

TEST(DataParallelCli, NcclWithoutACudaDeviceIsAUsageError) {
  TempDir dir;
  const auto result = run_graphloom("train --epochs 1 --dist-backend nccl", dir.path());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--dist-backend nccl reduces CUDA tensors"), std::string::npos)
      << result.output;
}

TEST(DataParallelCli, NprocUnderALauncherIsAUsageError) {
  TempDir dir;
  BackgroundProcess process({"train", "--nproc", "2", "--epochs", "1"}, {"RANK=0", "WORLD_SIZE=2"},
                            dir / "out.log");
  EXPECT_EQ(process.wait_for(60), 2) << process.output();
  EXPECT_NE(process.output().find("RANK/WORLD_SIZE"), std::string::npos) << process.output();
}

TEST(DataParallelCli, PortInUseIsAClearError) {
  BusyPort busy;
  const auto result = run_graphloom(
      fmt::format("train --nproc 2 --epochs 1 --no-progress --master-port {}", busy.port()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(fmt::format("port {}", busy.port())), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("in use"), std::string::npos) << result.output;
}

TEST(DataParallelCli, KilledRankMakesTheOthersExitWithAClearError) {
  TempDir dir;
  const int port = free_port_range();
  std::vector<std::unique_ptr<BackgroundProcess>> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.push_back(std::make_unique<BackgroundProcess>(
        std::vector<std::string>{"train", "--epochs", "100", "--no-progress"},
        std::vector<std::string>{fmt::format("RANK={}", rank), "WORLD_SIZE=2",
                                 "MASTER_ADDR=127.0.0.1", fmt::format("MASTER_PORT={}", port),
                                 "OMP_NUM_THREADS=1"},
        dir / fmt::format("rank{}.log", rank)));
  }
  ASSERT_TRUE(
      eventually([&] { return ranks[0]->output().find("epoch   1") != std::string::npos; }, 120))
      << ranks[0]->output();
  ranks[1]->kill(SIGKILL);
  const int code = ranks[0]->wait_for(60);
  EXPECT_EQ(code, 1) << ranks[0]->output();
  EXPECT_NE(ranks[0]->output().find("a peer process exited"), std::string::npos)
      << ranks[0]->output();
}

TEST(DataParallelCli, NprocStopsEveryTrainerWhenOneDies) {
  TempDir dir;
  BackgroundProcess launcher({"train", "--nproc", "2", "--epochs", "100", "--no-progress"}, {},
                             dir / "launcher.log");
  ASSERT_TRUE(
      eventually([&] { return launcher.output().find("epoch   1") != std::string::npos; }, 120))
      << launcher.output();
  const std::vector<int> trainers = children_of(launcher.pid());
  ASSERT_EQ(trainers.size(), 2u);
  ::kill(trainers[1], SIGKILL);
  EXPECT_EQ(launcher.wait_for(60), 128 + SIGKILL) << launcher.output();
  EXPECT_NE(launcher.output().find("trainer rank 1"), std::string::npos) << launcher.output();
  EXPECT_FALSE(running(trainers[0]));
}

TEST(DataParallelCli, KilledLauncherTakesItsTrainersDown) {
  TempDir dir;
  BackgroundProcess launcher({"train", "--nproc", "2", "--epochs", "100", "--no-progress"}, {},
                             dir / "launcher.log");
  ASSERT_TRUE(eventually([&] { return children_of(launcher.pid()).size() == 2; }, 60));
  const std::vector<int> trainers = children_of(launcher.pid());
  launcher.kill(SIGKILL);
  EXPECT_EQ(launcher.wait_for(30), 128 + SIGKILL);
  for (const int trainer : trainers) {
    EXPECT_TRUE(eventually([&] { return !running(trainer); }, 30)) << "trainer " << trainer;
  }
}

TEST(DataParallelCli, TwoProcessCoraMatchesOneProcess) {
  GL_REQUIRE_SHARED_DATASET(cora, "cora");
  TempDir dir;
  ASSERT_EQ(run_graphloom("convert --from shared " + cora.string() + " cora", dir.path()).exit_code,
            0);
  // Full-batch GCN: the two ranks' halves average to the full-batch gradient.
  const std::string flags =
      "train --data cora --model gcn --fanouts -1,-1 --batch-size 140 --epochs 200 "
      "--weight-decay 5e-4 --normalize-features row --hidden 16 --lr 0.01 --dropout 0.5 "
      "--eval-every 10 --no-progress";
  const auto one = run_graphloom(flags, dir.path());
  // The gradients through a Gloo group of their own: the path NCCL takes on GPUs.
  const auto two =
      run_graphloom(flags + " --nproc 2 --check-sync 50 --dist-backend gloo", dir.path());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  ASSERT_EQ(two.exit_code, 0) << two.output;
  const double one_acc = value_after(one.output, "test accuracy");
  const double two_acc = value_after(two.output, "test accuracy");
  std::cout << "Cora GCN test accuracy: 1 process " << one_acc << ", 2 processes " << two_acc
            << "\n";
  EXPECT_NE(two.output.find("gradient buckets through gloo (device)"), std::string::npos)
      << two.output;
  EXPECT_GT(two_acc, 0.79);
  EXPECT_NEAR(two_acc, one_acc, 0.025);
}

}  // namespace
}  // namespace graphloom::testing
