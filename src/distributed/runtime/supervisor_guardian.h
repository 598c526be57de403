// The guardian of a job's supervisor: with --max-restarts, `graphloom launch` (and
// `train --nproc`, `serve --num-servers`) supervises its processes from a child process and
// outlives it, so that a SIGKILL of the supervisor does not end the job.
#pragma once

#include <functional>

#include "graphloom/distributed/runtime/process_launcher.h"

namespace graphloom::distributed {

// Set by a supervisor in its processes' environment: its pid.
inline constexpr const char* kSupervisorVariable = "GRAPHLOOM_SUPERVISOR_PID";

// Whether this process's parent is a graphloom supervisor, which restarts it when it dies (so
// it needs no guardian of its own).
bool supervised_by_parent();

// Runs `supervise` in a child process and waits for it, forwarding SIGINT/SIGTERM. This process
// is the child subreaper of everything below it: when the supervisor dies of a signal, its
// processes die with it (PR_SET_PDEATHSIG) and are reaped here; then options.before_restart
// runs and `supervise` starts again, while options.max_restarts lasts. `restarts` (shared with
// the child) counts every restart of the job, made by the supervisor or here. Returns the
// supervisor's exit code.
int run_guarded(const std::function<int(int& restarts)>& supervise, const LaunchOptions& options);

}  // namespace graphloom::distributed
