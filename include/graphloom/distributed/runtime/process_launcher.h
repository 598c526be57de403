// Starting and supervising a job's local processes (`graphloom train --nproc N`, and the
// local side of `graphloom launch`): like torch's mp.spawn, but the job never outlives a
// failure. The first process that fails takes the others down and its exit code is the job's;
// SIGINT/SIGTERM sent to the launcher are forwarded; if the launcher itself dies, the kernel
// terminates its children (PR_SET_PDEATHSIG).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace graphloom::distributed {

struct ProcessSpec {
  std::string name;                                // "rank 1", for messages
  std::vector<std::string> argv;                   // argv[0] is the executable path
  std::map<std::string, std::string> environment;  // added to (or replacing) the launcher's
  // A service (a graph server) runs until the job is done: once every non-service process has
  // exited successfully, services get SIGTERM and their exit is awaited. A service that exits
  // on its own before that is a failure.
  bool service = false;
};

struct LaunchOptions {
  // After a failure, how long the others get to exit on SIGTERM before SIGKILL.
  std::chrono::milliseconds grace = std::chrono::seconds(10);
};

// Runs all processes to completion. Returns 0 when all exit with 0, otherwise the exit code
// of the first that failed (128 + signal number when it was killed by a signal).
// With services: 0 when every other process exited with 0 (the services are then stopped).
int run_processes(const std::vector<ProcessSpec>& processes, const LaunchOptions& options = {});

// This program's command line `argv` as the argv of a ProcessSpec that restarts it
// (/proc/self/exe), without the flags in `drop` and their values ("--flag value" and
// "--flag=value"): e.g. `--nproc` starting each trainer as the same command without it.
std::vector<std::string> argv_without(const std::vector<std::string>& argv,
                                      const std::vector<std::string>& drop);

}  // namespace graphloom::distributed
