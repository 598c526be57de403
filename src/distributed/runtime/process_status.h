// What the launcher's supervisor and its guardian share (process_launcher.cpp,
// supervisor_guardian.cpp): the stop signal they forward and how a child process ended.
#pragma once

#include <signal.h>

#include <string>

namespace graphloom::distributed {

// Records SIGINT/SIGTERM for the lifetime of one run_processes call instead of dying of them:
// the supervisor forwards them to its processes, the guardian to the supervisor.
class SignalForwarding {
 public:
  SignalForwarding();
  ~SignalForwarding();
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// The signal received since the innermost SignalForwarding was installed (0: none).
int forwarded_signal();

// A waitpid status as an exit code: 128 + the signal number when it was killed by one.
int exit_code_of(int status);

// "exited with code 3", "was killed by signal 9 (Killed)".
std::string describe_exit(int status);

}  // namespace graphloom::distributed
