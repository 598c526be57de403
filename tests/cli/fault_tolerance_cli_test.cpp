// Jobs that survive failures: a trainer or server process killed with SIGKILL is restarted
// (--max-restarts), the trainers resume from their last step checkpoint, and the job ends with
// the parameters of the same job undisturbed. The chaos test kills random processes of a
// `launch` job at random moments; GRAPHLOOM_CHAOS_RUNS=N repeats it (CI runs it once).
#include <gtest/gtest.h>
#include <signal.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include "support/test_support.h"

namespace graphloom::testing {
namespace {

namespace fs = std::filesystem;

// Every tensor of a checkpoint's model, by its path of names.
void collect_tensors(torch::serialize::InputArchive& archive, const std::string& prefix,
                     std::map<std::string, torch::Tensor>& out) {
  for (const std::string& key : archive.keys()) {
    torch::Tensor tensor;
    if (archive.try_read(key, tensor)) {
      out[prefix + key] = tensor;
      continue;
    }
    torch::serialize::InputArchive child;
    if (archive.try_read(key, child)) collect_tensors(child, prefix + key + ".", out);
  }
}

std::map<std::string, torch::Tensor> model_tensors(const fs::path& checkpoint) {
  torch::serialize::InputArchive archive;
  archive.load_from(checkpoint.string());
  torch::serialize::InputArchive model;
  archive.read("model", model);
  std::map<std::string, torch::Tensor> tensors;
  collect_tensors(model, "", tensors);
  return tensors;
}

// Whether two checkpoints hold the same model, bitwise.
::testing::AssertionResult same_model(const fs::path& a, const fs::path& b) {
  const auto left = model_tensors(a);
  const auto right = model_tensors(b);
  if (left.empty()) return ::testing::AssertionFailure() << a << " holds no model tensor";
  if (left.size() != right.size()) {
    return ::testing::AssertionFailure() << left.size() << " tensors against " << right.size();
  }
  for (const auto& [name, tensor] : left) {
    const auto other = right.find(name);
    if (other == right.end()) return ::testing::AssertionFailure() << name << " missing in " << b;
    if (!torch::equal(tensor, other->second)) {
      return ::testing::AssertionFailure()
             << name
             << " differs: max |a - b| = " << (tensor - other->second).abs().max().item<double>();
    }
  }
  return ::testing::AssertionSuccess() << left.size() << " tensors equal";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int count_of(const std::string& text, const std::string& word) {
  int count = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    ++count;
  }
  return count;
}

// train --nproc 2: rank 1 killed after the first step checkpoint; the job restarts both ranks,
// which resume from it and end where the undisturbed job ends.
TEST(FaultToleranceCli, NprocJobSurvivesAKilledTrainerWithTheUndisturbedParameters) {
  TempDir dir;
  const auto job = [&](const std::string& checkpoint) {
    return std::vector<std::string>{"train",
                                    "--nproc",
                                    "2",
                                    "--epochs",
                                    "5",
                                    "--no-progress",
                                    "--no-test",
                                    "--checkpoint",
                                    (dir / checkpoint).string(),
                                    "--checkpoint-every",
                                    "4",
                                    "--max-restarts",
                                    "1"};
  };
  auto start = std::chrono::steady_clock::now();
  BackgroundProcess undisturbed(job("undisturbed.pt"), {}, dir / "undisturbed.log");
  ASSERT_EQ(undisturbed.wait_for(300), 0) << undisturbed.output();
  const double undisturbed_seconds = seconds_since(start);

  start = std::chrono::steady_clock::now();
  BackgroundProcess disturbed(job("disturbed.pt"), {}, dir / "disturbed.log");
  ASSERT_TRUE(eventually([&] { return fs::exists(dir / "disturbed.pt"); }, 120))
      << disturbed.output();
  const std::vector<int> ranks = children_running(supervisor_of(disturbed.pid()), {" train "});
  ASSERT_EQ(ranks.size(), 2u) << disturbed.output();
  ::kill(ranks[1], SIGKILL);
  ASSERT_EQ(disturbed.wait_for(300), 0) << disturbed.output();
  const double disturbed_seconds = seconds_since(start);
  const std::string output = disturbed.output();
  EXPECT_NE(output.find("trainer rank 1"), std::string::npos) << output;
  EXPECT_NE(output.find("restart 1 of 1"), std::string::npos) << output;
  EXPECT_NE(output.find("resumed from"), std::string::npos) << output;
  EXPECT_TRUE(same_model(dir / "undisturbed.pt", dir / "disturbed.pt"));
  std::cout << "train --nproc 2, one trainer killed: " << disturbed_seconds << " s against "
            << undisturbed_seconds << " s undisturbed\n";
}

// Without restarts left, the failure still ends the job (the launcher's exit code is the
// killed process's).
TEST(FaultToleranceCli, NprocJobWithoutRestartsLeftFails) {
  TempDir dir;
  BackgroundProcess job(
      {"train", "--nproc", "2", "--epochs", "100", "--no-progress", "--max-restarts", "0"}, {},
      dir / "job.log");
  ASSERT_TRUE(eventually([&] { return job.output().find("epoch   1") != std::string::npos; }, 120))
      << job.output();
  const std::vector<int> ranks = children_running(supervisor_of(job.pid()), {" train "});
  ASSERT_EQ(ranks.size(), 2u);
  ::kill(ranks[0], SIGKILL);
  EXPECT_EQ(job.wait_for(60), 128 + SIGKILL) << job.output();
  EXPECT_EQ(count_of(job.output(), "restart 1 of"), 0) << job.output();
}

// `graphloom launch` on 2 loopback machines x (2 servers + 1 trainer), with step checkpoints.
class LaunchChaosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(make_quick_partition(dir_.path()));
    write_loopback_ip_config(dir_.path());
    cluster_ = fmt::format("test{}-chaos", ::getpid());
  }

  std::vector<std::string> launch_args(const std::string& checkpoint, int max_restarts,
                                       const std::vector<std::string>& more = {}) const {
    std::vector<std::string> args{"launch",
                                  "--ip-config",
                                  (dir_ / "ip.txt").string(),
                                  "--part-config",
                                  (dir_ / "parts").string(),
                                  "--num-servers",
                                  "2",
                                  "--num-trainers",
                                  "1",
                                  "--cluster-id",
                                  cluster_,
                                  "--max-restarts",
                                  std::to_string(max_restarts),
                                  "--",
                                  "graphloom",
                                  "train"};
    const std::vector<std::string> flags = quick_training_flags();
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--epochs", std::to_string(epochs_), "--eval-every", "20",
                             "--no-progress", "--no-test", "--checkpoint",
                             (dir_ / checkpoint).string(), "--checkpoint-every", "10"});
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  // The processes a chaos run may kill: every process of the job but the launcher, whose death
  // leaves the job running without it (KilledLauncherLeavesItsSupervisor...): the launcher's
  // supervisor, the trainers, each machine's server supervisor and its servers.
  static std::vector<int> victims(int launcher) {
    const int job_supervisor = supervisor_of(launcher);
    std::vector<int> found = children_running(job_supervisor, {" train "});
    if (job_supervisor != launcher) found.push_back(job_supervisor);
    for (const int supervisor : children_running(job_supervisor, {" serve "})) {
      found.push_back(supervisor);
      for (const int server : children_running(supervisor, {"--role"})) found.push_back(server);
    }
    return found;
  }

  // "main server of part 1 (pid 123)" or "trainer of machine 0 (pid 124)".
  static std::string describe(int pid) {
    std::ifstream cmdline(fmt::format("/proc/{}/cmdline", pid));
    std::vector<std::string> argv;
    for (std::string arg; std::getline(cmdline, arg, '\0');) argv.push_back(arg);
    const auto value_of = [&](const std::string& flag) {
      const auto found = std::find(argv.begin(), argv.end(), flag);
      return found != argv.end() && found + 1 != argv.end() ? *(found + 1) : std::string("?");
    };
    if (std::find(argv.begin(), argv.end(), "launch") != argv.end()) {
      return fmt::format("the launcher's supervisor (pid {})", pid);
    }
    if (std::find(argv.begin(), argv.end(), "--role") != argv.end()) {
      return fmt::format("{} server of part {} (pid {})", value_of("--role"), value_of("--part"),
                         pid);
    }
    if (std::find(argv.begin(), argv.end(), "serve") != argv.end()) {
      return fmt::format("server supervisor of part {} (pid {})", value_of("--part"), pid);
    }
    return fmt::format("trainer of machine {} (pid {})", value_of("--machine"), pid);
  }

  bool segments_left() const { return shared_memory_left(cluster_); }

  // Runs the job undisturbed (its final parameters go to undisturbed.pt); returns its time.
  double run_undisturbed(const std::vector<std::string>& more = {}) {
    const auto start = std::chrono::steady_clock::now();
    BackgroundProcess job(launch_args("undisturbed.pt", 0, more), {}, dir_ / "undisturbed.log");
    EXPECT_EQ(job.wait_for(600), 0) << job.output();
    return seconds_since(start);
  }

  // One run with `kills` SIGKILLs of random victims, 0.5-2.5 s apart, the first after the first
  // checkpoint; returns its time.
  double run_with_kills(int kills, uint64_t seed) {
    std::mt19937_64 random(seed);
    const std::string checkpoint = fmt::format("chaos-{}.pt", seed);
    fs::remove(dir_ / checkpoint);
    const auto start = std::chrono::steady_clock::now();
    BackgroundProcess job(launch_args(checkpoint, kills), {}, dir_ / "chaos.log");
    EXPECT_TRUE(eventually([&] { return fs::exists(dir_ / checkpoint); }, 300)) << job.output();
    for (int k = 0; k < kills; ++k) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(500 + static_cast<int64_t>(random() % 2000)));
      const std::vector<int> alive = victims(job.pid());
      EXPECT_FALSE(alive.empty()) << "seed " << seed << ": the job ended before kill " << k + 1;
      if (alive.empty()) break;
      const int victim = alive[random() % alive.size()];
      std::cout << "seed " << seed << " kill " << k + 1 << ": " << describe(victim) << "\n";
      ::kill(victim, SIGKILL);
    }
    EXPECT_EQ(job.wait_for(600), 0) << job.output();
    const double seconds = seconds_since(start);
    EXPECT_TRUE(same_model(dir_ / "undisturbed.pt", dir_ / checkpoint)) << "seed " << seed;
    EXPECT_FALSE(segments_left());
    return seconds;
  }

  TempDir dir_;
  std::string cluster_;
  // ~0.07 s each here: a kill right after the first checkpoint (epoch 10) lands mid-job with
  // seconds to spare; the random kills, up to 7.5 s apart in all, need the longer job.
  int epochs_ = 80;
};

TEST_F(LaunchChaosTest, KilledMainServerAndTrainerCostOneRestartEach) {
  run_undisturbed();
  const std::string checkpoint = "single.pt";
  BackgroundProcess job(launch_args(checkpoint, 2), {}, dir_ / "single.log");
  ASSERT_TRUE(eventually([&] { return fs::exists(dir_ / checkpoint); }, 300)) << job.output();
  // Part 1's main server: its trainers move to the backup; the restarted main maps the memory.
  const std::vector<int> supervisors =
      children_running(supervisor_of(job.pid()), {" serve ", "--part 1 "});
  ASSERT_EQ(supervisors.size(), 1u) << job.output();
  const std::vector<int> mains = children_running(supervisors[0], {"--role main"});
  ASSERT_EQ(mains.size(), 1u) << job.output();
  ::kill(mains[0], SIGKILL);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::vector<int> trainers = children_running(supervisor_of(job.pid()), {" train "});
  ASSERT_EQ(trainers.size(), 2u) << job.output();
  ::kill(trainers[0], SIGKILL);
  ASSERT_EQ(job.wait_for(600), 0) << job.output();
  const std::string output = job.output();
  EXPECT_NE(output.find("main server 0 of part 1"), std::string::npos) << output;
  EXPECT_NE(output.find("serving the shared memory already published"), std::string::npos)
      << output;
  EXPECT_NE(output.find("restarted the 2 rank(s)"), std::string::npos) << output;
  EXPECT_TRUE(same_model(dir_ / "undisturbed.pt", dir_ / checkpoint));
  EXPECT_FALSE(segments_left());
}

// A machine's server supervisor (`serve --num-servers 2`) killed: its servers die with it
// (PR_SET_PDEATHSIG), the launcher starts it again, its new main server maps the part's shared
// memory, and the trainers, which lost the part meanwhile, restart and resume.
TEST_F(LaunchChaosTest, KilledServerSupervisorIsRestartedWithItsServers) {
  run_undisturbed();
  const std::string checkpoint = "supervisor.pt";
  BackgroundProcess job(launch_args(checkpoint, 1), {}, dir_ / "supervisor.log");
  ASSERT_TRUE(eventually([&] { return fs::exists(dir_ / checkpoint); }, 300)) << job.output();
  const std::vector<int> supervisors =
      children_running(supervisor_of(job.pid()), {" serve ", "--part 0 "});
  ASSERT_EQ(supervisors.size(), 1u) << job.output();
  ::kill(supervisors[0], SIGKILL);
  ASSERT_EQ(job.wait_for(600), 0) << job.output();
  EXPECT_TRUE(same_model(dir_ / "undisturbed.pt", dir_ / checkpoint));
  EXPECT_FALSE(segments_left());
}

// The launcher's supervisor killed: its processes die with it, the launcher (its guardian)
// reaps them, removes the shared memory and starts the job again; the trainers resume.
TEST_F(LaunchChaosTest, KilledLauncherSupervisorIsStartedAgainByTheLauncher) {
  run_undisturbed();
  const std::string checkpoint = "launcher-supervisor.pt";
  BackgroundProcess job(launch_args(checkpoint, 1), {}, dir_ / "launcher-supervisor.log");
  ASSERT_TRUE(eventually([&] { return fs::exists(dir_ / checkpoint); }, 300)) << job.output();
  const int supervisor = supervisor_of(job.pid());
  ASSERT_NE(supervisor, job.pid()) << "no supervisor under the launcher";
  ::kill(supervisor, SIGKILL);
  ASSERT_EQ(job.wait_for(600), 0) << job.output();
  const std::string output = job.output();
  EXPECT_NE(output.find("the job's supervisor (pid " + std::to_string(supervisor) +
                        ") was killed by signal 9 (Killed): restart 1 of 1"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("resumed from"), std::string::npos) << output;
  EXPECT_TRUE(same_model(dir_ / "undisturbed.pt", dir_ / checkpoint));
  EXPECT_FALSE(segments_left());
}

// The launcher itself killed: whoever started it sees 137, and its supervisor, now an orphan,
// runs the job to its end, stops the servers and removes the shared memory.
TEST_F(LaunchChaosTest, KilledLauncherLeavesItsSupervisorRunningTheJobToItsEnd) {
  run_undisturbed();
  const std::string checkpoint = "orphan.pt";
  BackgroundProcess job(launch_args(checkpoint, 1), {}, dir_ / "orphan.log");
  ASSERT_TRUE(eventually([&] { return fs::exists(dir_ / checkpoint); }, 300)) << job.output();
  const int supervisor = supervisor_of(job.pid());
  ASSERT_NE(supervisor, job.pid()) << "no supervisor under the launcher";
  job.kill(SIGKILL);
  EXPECT_EQ(job.wait_for(60), 128 + SIGKILL);
  ASSERT_TRUE(eventually([&] { return !running(supervisor); }, 600)) << job.output();
  EXPECT_NE(job.output().find("job done: stopping"), std::string::npos) << job.output();
  EXPECT_TRUE(same_model(dir_ / "undisturbed.pt", dir_ / checkpoint));
  EXPECT_FALSE(segments_left());
}

// The servers' DistEmbedding (--embed-dim) is trained outside the model: the checkpoint holds
// its rows and optimizer state, and the restarted job puts them back before any rank pulls.
// Not compared bitwise with an undisturbed job: the owners apply the trainers' updates of a row
// in arrival order, so two undisturbed embedding jobs differ too (docs/distributed-guide.md).
TEST_F(LaunchChaosTest, KilledTrainerOfAnEmbeddingJobRestoresTheServersRows) {
  const std::vector<std::string> embedding{"--embed-dim", "8", "--embed-optimizer", "adagrad"};
  const std::string checkpoint = "embedding.pt";
  BackgroundProcess job(launch_args(checkpoint, 1, embedding), {}, dir_ / "embedding.log");
  ASSERT_TRUE(eventually([&] { return fs::exists(dir_ / checkpoint); }, 300)) << job.output();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // steps past the checkpoint
  const std::vector<int> trainers = children_running(supervisor_of(job.pid()), {" train "});
  ASSERT_EQ(trainers.size(), 2u) << job.output();
  ::kill(trainers[1], SIGKILL);
  ASSERT_EQ(job.wait_for(600), 0) << job.output();
  const std::string output = job.output();
  EXPECT_NE(output.find("restarted the 2 rank(s)"), std::string::npos) << output;
  EXPECT_NE(output.find("restored node-embedding, node-embedding-adagrad-sum from the checkpoint"),
            std::string::npos)
      << output;
  torch::serialize::InputArchive archive, external;
  archive.load_from((dir_ / checkpoint).string());
  archive.read("external_state", external);
  std::map<std::string, torch::Tensor> rows;
  collect_tensors(external, "", rows);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows["node-embedding"].size(1), 8);
  EXPECT_GT(rows["node-embedding-adagrad-sum"].max().item<float>(), 0.0f) << "rows never updated";
  EXPECT_FALSE(segments_left());
}

// Each run alternates an undisturbed job and one with 3 random kills (the host is noisy).
TEST_F(LaunchChaosTest, ThreeRandomKillsPerRunEndWithTheUndisturbedParameters) {
  const char* runs_variable = std::getenv("GRAPHLOOM_CHAOS_RUNS");
  const int runs = runs_variable != nullptr ? std::max(1, std::atoi(runs_variable)) : 1;
  epochs_ = 250;
  std::vector<double> undisturbed, disturbed;
  for (int run = 0; run < runs; ++run) {
    undisturbed.push_back(run_undisturbed());
    disturbed.push_back(run_with_kills(3, 1000 + static_cast<uint64_t>(run)));
    std::cout << "run " << run + 1 << ": " << disturbed.back() << " s with 3 kills, "
              << undisturbed.back() << " s undisturbed\n";
  }
  const auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  std::cout << "chaos: " << runs << " run(s), median " << median(disturbed)
            << " s with 3 kills against " << median(undisturbed) << " s undisturbed ("
            << median(disturbed) / median(undisturbed) << "x)\n";
}

}  // namespace
}  // namespace graphloom::testing
