// run_processes: exit codes, fail-fast teardown, environment.
#include "graphloom/distributed/runtime/process_launcher.h"

#include <gtest/gtest.h>

#include <chrono>

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

}  // namespace
}  // namespace graphloom::distributed
