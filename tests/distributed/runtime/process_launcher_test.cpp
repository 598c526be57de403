// run_processes: exit codes, fail-fast teardown, environment, restarts.
#include "graphloom/distributed/runtime/process_launcher.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

ProcessSpec shell(const std::string& name, const std::string& script,
                  std::map<std::string, std::string> environment = {}) {
  return {.name = name, .argv = {"/bin/sh", "-c", script}, .environment = std::move(environment)};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ProcessLauncher, AllSucceed) {
  EXPECT_EQ(run_processes({shell("a", "exit 0"), shell("b", "true")}), 0);
}

TEST(ProcessLauncher, EnvironmentReachesTheProcess) {
  EXPECT_EQ(run_processes({shell("a", "exit $CODE", {{"CODE", "7"}})}), 7);
}

TEST(ProcessLauncher, FirstFailureStopsTheOthersAndGivesItsCode) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_processes({shell("sleeper", "sleep 60"), shell("failer", "sleep 0.2; exit 3")}), 3);
  EXPECT_LT(seconds_since(start), 10.0);  // the sleeper was terminated, not waited for
}

TEST(ProcessLauncher, ProcessIgnoringSigtermIsKilledAfterTheGrace) {
  const auto start = std::chrono::steady_clock::now();
  const int code = run_processes({shell("stubborn", "trap '' TERM; while true; do sleep 0.1; done"),
                                  shell("failer", "exit 4")},
                                 {.grace = std::chrono::milliseconds(500)});
  EXPECT_EQ(code, 4);
  EXPECT_LT(seconds_since(start), 10.0);
}

TEST(ProcessLauncher, ServicesAreStoppedWhenTheJobIsDone) {
  ProcessSpec server = shell("server", "exec sleep 60");
  server.service = true;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_processes({server, shell("trainer", "sleep 0.2")}), 0);
  EXPECT_LT(seconds_since(start), 10.0);
}

TEST(ProcessLauncher, ServiceExitingEarlyFailsTheJob) {
  ProcessSpec server = shell("server", "exit 0");
  server.service = true;
  EXPECT_EQ(run_processes({server, shell("trainer", "sleep 30")}), 1);
}

TEST(ProcessLauncher, KilledBySignalIs128PlusSignal) {
  EXPECT_EQ(run_processes({shell("victim", "kill -9 $$")}), 128 + 9);
}

TEST(ProcessLauncher, MissingExecutableFails) {
  EXPECT_EQ(run_processes({{.name = "ghost", .argv = {"/nonexistent/graphloom"}}}), 127);
}

// The lines a test's processes appended to `file`.
int lines_in(const std::filesystem::path& file) {
  std::ifstream in(file);
  return static_cast<int>(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

TEST(ProcessLauncher, FailedProcessIsRestartedWithTheRestartCount) {
  const testing::TempDir dir;
  const std::string starts = (dir / "starts").string();
  // Fails on its first start, succeeds when it sees that it was restarted once.
  const std::string script =
      "echo start >> " + starts + "; [ \"$GRAPHLOOM_RESTART_COUNT\" = 1 ] && exit 0; exit 5";
  EXPECT_EQ(run_processes({shell("flaky", script)}, {.max_restarts = 1}), 0);
  EXPECT_EQ(lines_in(starts), 2);
}

TEST(ProcessLauncher, RestartsRunOutAndTheLastFailureIsTheJobs) {
  const testing::TempDir dir;
  const std::string starts = (dir / "starts").string();
  EXPECT_EQ(
      run_processes({shell("broken", "echo start >> " + starts + "; exit 3")}, {.max_restarts = 2}),
      3);
  EXPECT_EQ(lines_in(starts), 3);  // the first start and two restarts
}

TEST(ProcessLauncher, ARankThatDiesRestartsTheWholeProcessGroup) {
  const testing::TempDir dir;
  const std::string starts = (dir / "starts").string();
  // Rank 0 would wait forever for a dead peer; rank 1 dies on the first attempt. After the
  // restart both finish.
  ProcessSpec rank0 = shell("rank 0", "echo 0 >> " + starts +
                                          "; [ -n \"$GRAPHLOOM_RESTART_COUNT\" ] && exit 0; "
                                          "exec sleep 60");
  ProcessSpec rank1 = shell("rank 1", "echo 1 >> " + starts +
                                          "; [ -n \"$GRAPHLOOM_RESTART_COUNT\" ] && exit 0; "
                                          "sleep 0.3; kill -9 $$");
  rank0.in_process_group = rank1.in_process_group = true;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_processes({rank0, rank1}, {.max_restarts = 1}), 0);
  EXPECT_LT(seconds_since(start), 20.0);  // rank 0 was stopped, not waited for
  EXPECT_EQ(lines_in(starts), 4);
}

TEST(ProcessLauncher, AServiceIsRestartedAloneWhileTheOthersRun) {
  const testing::TempDir dir;
  const std::string server_starts = (dir / "server").string();
  const std::string trainer_starts = (dir / "trainer").string();
  ProcessSpec server =
      shell("server", "echo s >> " + server_starts +
                          "; [ -n \"$GRAPHLOOM_RESTART_COUNT\" ] && exec sleep 60; exit 1");
  server.service = true;
  ProcessSpec trainer = shell("trainer", "echo t >> " + trainer_starts + "; sleep 1");
  trainer.in_process_group = true;
  EXPECT_EQ(run_processes({server, trainer}, {.max_restarts = 1}), 0);
  EXPECT_EQ(lines_in(server_starts), 2);
  EXPECT_EQ(lines_in(trainer_starts), 1);
}

// With a guard, the supervision runs in a child process (the supervisor) and the caller is its
// guardian. These processes kill their parent: the supervisor, never the test.
TEST(ProcessLauncher, KilledSupervisorIsStartedAgainByItsGuardian) {
  const testing::TempDir dir;
  const std::string starts = (dir / "starts").string();
  const std::string script = "echo start >> " + starts +
                             "; [ -n \"$GRAPHLOOM_RESTART_COUNT\" ] && exit 0; "
                             "kill -9 $PPID; exec sleep 60";
  int before_restart = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_processes(
                {shell("killer", script)},
                {.max_restarts = 1, .guard = true, .before_restart = [&] { ++before_restart; }}),
            0);
  EXPECT_LT(seconds_since(start), 20.0);  // the orphaned `sleep` was killed, not waited for
  EXPECT_EQ(lines_in(starts), 2);
  EXPECT_EQ(before_restart, 1);
}

// The guardian's restart counts against the job's restarts: the restarted supervisor has none
// left for the failure that follows.
TEST(ProcessLauncher, TheGuardianSharesTheJobsRestartCount) {
  const testing::TempDir dir;
  const std::string starts = (dir / "starts").string();
  const std::string script = "echo start >> " + starts +
                             "; [ \"$GRAPHLOOM_RESTART_COUNT\" = 1 ] && exit 3; "
                             "kill -9 $PPID; exec sleep 60";
  EXPECT_EQ(run_processes({shell("killer", script)}, {.max_restarts = 1, .guard = true}), 3);
  EXPECT_EQ(lines_in(starts), 2);
}

TEST(ProcessLauncher, ASupervisorKilledWithoutRestartsLeftEndsTheJob) {
  const testing::TempDir dir;
  const std::string starts = (dir / "starts").string();
  const std::string script = "echo start >> " + starts + "; kill -9 $PPID; exec sleep 60";
  EXPECT_EQ(run_processes({shell("killer", script)}, {.max_restarts = 1, .guard = true}), 128 + 9);
  EXPECT_EQ(lines_in(starts), 2);
}

// SIGTERM to the guardian (this process) reaches the supervisor, which stops its processes;
// the job ends with 128 + SIGTERM and is not restarted.
TEST(ProcessLauncher, TheGuardianForwardsAStopSignalAndDoesNotRestart) {
  const testing::TempDir dir;
  const std::string starts = (dir / "starts").string();
  const std::string script = "echo start >> " + starts + "; sleep 0.3; kill -TERM " +
                             std::to_string(::getpid()) + "; exec sleep 60";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_processes({shell("stopper", script)}, {.max_restarts = 1, .guard = true}),
            128 + SIGTERM);
  EXPECT_LT(seconds_since(start), 20.0);
  EXPECT_EQ(lines_in(starts), 1);
}

TEST(ProcessLauncher, AJobOfServicesOnlyRunsUntilToldToStop) {
  ProcessSpec server = shell("server", "exec sleep 0.5");
  server.service = true;
  // Not stopped at once as "done"; its own exit is the failure.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_processes({server}), 1);
  EXPECT_GE(seconds_since(start), 0.4);
}

}  // namespace
}  // namespace graphloom::distributed
