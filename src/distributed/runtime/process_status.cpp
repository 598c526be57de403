// Signal forwarding and exit statuses of supervised processes (process_status.h).
#include "process_status.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <cstring>

namespace graphloom::distributed {
namespace {

volatile sig_atomic_t g_forwarded_signal = 0;

void remember_signal(int signal) { g_forwarded_signal = signal; }

}  // namespace

SignalForwarding::SignalForwarding() {
  g_forwarded_signal = 0;
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &previous_int_);
  ::sigaction(SIGTERM, &action, &previous_term_);
}

SignalForwarding::~SignalForwarding() {
  ::sigaction(SIGINT, &previous_int_, nullptr);
  ::sigaction(SIGTERM, &previous_term_, nullptr);
}

int forwarded_signal() { return g_forwarded_signal; }

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       ::strsignal(WTERMSIG(status)));
  }
  return fmt::format("exited with code {}", exit_code_of(status));
}

}  // namespace graphloom::distributed
