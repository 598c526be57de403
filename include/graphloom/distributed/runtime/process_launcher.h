// Starting and supervising a job's local processes (`graphloom train --nproc N`, and the
// local side of `graphloom launch`): like torch's mp.spawn and torchrun's agent, and the job
// never outlives a failure. A process that fails is restarted while the job's restarts last
// (--max-restarts); after that the first failure takes the others down and its exit code is
// the job's. SIGINT/SIGTERM sent to the launcher are forwarded; if the supervising process
// itself dies, the kernel terminates its children (PR_SET_PDEATHSIG), and with restarts and
// LaunchOptions::guard a guardian process starts them all again.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace graphloom::distributed {

struct ProcessSpec {
  std::string name;                                // "rank 1", for messages
  std::vector<std::string> argv;                   // argv[0] is the executable path
  std::map<std::string, std::string> environment;  // added to (or replacing) the launcher's
  // A service (a graph server) runs until the job is done: once every non-service process has
  // exited successfully, services get SIGTERM and their exit is awaited (a job of services
  // only runs until it is told to stop). A service that exits on its own before that is a
  // failure.
  bool service = false;
  // A rank of the job's process group (a trainer): when one fails and is restarted, all ranks
  // are stopped and started again together, since their collectives died with it. Any other
  // process is restarted alone.
  bool in_process_group = false;
};

// The variable that tells a restarted process how many restarts the job has had.
inline constexpr const char* kRestartCountVariable = "GRAPHLOOM_RESTART_COUNT";

struct LaunchOptions {
  // After a failure, how long the others get to exit on SIGTERM before SIGKILL.
  std::chrono::milliseconds grace = std::chrono::seconds(10);
  // Failures the job survives: a process that fails is started again (with its process group,
  // ProcessSpec::in_process_group). Each restart counts once; restarted processes find the
  // count in GRAPHLOOM_RESTART_COUNT.
  int max_restarts = 0;
  // With max_restarts > 0, the supervision runs in a child process, and this one (the process
  // the user started) guards it: when the supervisor is killed, its processes die with it and
  // all start again, with the job's restart count (the trainers resume from their checkpoint).
  // Killing the guardian leaves the supervisor running the job to its end. A process whose
  // parent is a graphloom supervisor (a `serve` under `launch`) is not guarded again: that
  // parent restarts it.
  bool guard = false;
  // In the guardian, after a killed supervisor's processes have all exited and before they
  // start again: e.g. removing the shared memory they left.
  std::function<void()> before_restart;
};

// Runs all processes to completion. Returns 0 when all exit with 0, otherwise the exit code
// of the failure that ended the job (128 + signal number when it was killed by a signal).
// With services: 0 when every other process exited with 0 (the services are then stopped).
int run_processes(std::vector<ProcessSpec> processes, const LaunchOptions& options = {});

// This program's command line `argv` as the argv of a ProcessSpec that restarts it
// (/proc/self/exe), without the flags in `drop` and their values ("--flag value" and
// "--flag=value"): e.g. `--nproc` starting each trainer as the same command without it.
std::vector<std::string> argv_without(const std::vector<std::string>& argv,
                                      const std::vector<std::string>& drop);

}  // namespace graphloom::distributed
