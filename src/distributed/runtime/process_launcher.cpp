// fork/exec supervision of local processes with fail-fast teardown and signal forwarding.
#include "graphloom/distributed/runtime/process_launcher.h"

#include <algorithm>

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "graphloom/base/error.h"

extern char** environ;

namespace graphloom::distributed {
namespace {

volatile sig_atomic_t g_forwarded_signal = 0;

void remember_signal(int signal) { g_forwarded_signal = signal; }

// Installs the forwarding handlers for the lifetime of one run_processes call.
class SignalForwarding {
 public:
  SignalForwarding() {
    g_forwarded_signal = 0;
    struct sigaction action {};
    action.sa_handler = remember_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous_int_);
    ::sigaction(SIGTERM, &action, &previous_term_);
  }
  ~SignalForwarding() {
    ::sigaction(SIGINT, &previous_int_, nullptr);
    ::sigaction(SIGTERM, &previous_term_, nullptr);
  }

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> merged;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string item(*entry);
    const std::string key = item.substr(0, item.find('='));
    if (!extra.count(key)) merged.push_back(item);
  }
  for (const auto& [key, value] : extra) merged.push_back(key + "=" + value);
  return merged;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

pid_t spawn(const ProcessSpec& spec) {
  GL_CHECK(!spec.argv.empty(), "process '{}' has no command", spec.name);
  // Everything the child needs is prepared before fork: only async-signal-safe calls after.
  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> env = merged_environment(spec.environment);
  std::vector<char*> argv_pointers = pointers(argv);
  std::vector<char*> env_pointers = pointers(env);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  GL_CHECK(pid >= 0, "cannot start {}: fork failed: {}", spec.name, std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group: teardown reaches whatever it starts too
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
    if (::getppid() != parent) ::_exit(1);
    ::execve(argv_pointers[0], argv_pointers.data(), env_pointers.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so that no signal can race the child's own call
  return pid;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       ::strsignal(WTERMSIG(status)));
  }
  return fmt::format("exited with code {}", exit_code_of(status));
}

}  // namespace

int run_processes(const std::vector<ProcessSpec>& processes, const LaunchOptions& options) {
  SignalForwarding forwarding;
  std::vector<pid_t> pids;
  std::size_t running = 0;
  int first_failure = 0;
  auto terminate_all = [&](int signal) {
    for (const pid_t pid : pids) {
      if (pid > 0) ::kill(-pid, signal);
    }
  };
  try {
    for (const ProcessSpec& spec : processes) {
      pids.push_back(spawn(spec));
      ++running;
    }
  } catch (...) {
    terminate_all(SIGKILL);
    for (const pid_t pid : pids) ::waitpid(pid, nullptr, 0);
    throw;
  }

  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> kill_deadline;
  int forwarded = 0;
  bool stopping = false;  // teardown began (failure, signal, or job done)
  while (running > 0) {
    if (g_forwarded_signal != 0 && forwarded == 0) {
      forwarded = g_forwarded_signal;
      spdlog::warn("received {}: stopping {} process(es)", ::strsignal(forwarded), running);
      terminate_all(forwarded);
      kill_deadline = Clock::now() + options.grace;
      stopping = true;
      if (first_failure == 0) first_failure = 128 + forwarded;
    }
    bool reaped = false;
    for (std::size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      if (pids[i] <= 0 || ::waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      reaped = true;
      const pid_t pid = std::exchange(pids[i], -1);
      --running;
      const int code = exit_code_of(status);
      // A service ending by itself, while the job still runs, is a failure whatever its code.
      const bool failed = code != 0 || (processes[i].service && !stopping);
      if (failed && first_failure == 0 && !(processes[i].service && stopping)) {
        first_failure = code != 0 ? code : 1;
        spdlog::error("{} (pid {}) {}: stopping the other {} process(es)", processes[i].name, pid,
                      describe(status), running);
        terminate_all(SIGTERM);
        kill_deadline = Clock::now() + options.grace;
        stopping = true;
      }
    }
    // The job is done when only services are left: stop them.
    if (!stopping && running > 0) {
      bool only_services = true;
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (pids[i] > 0 && !processes[i].service) only_services = false;
      }
      if (only_services) {
        spdlog::info("job done: stopping {} service process(es)", running);
        terminate_all(SIGTERM);
        kill_deadline = Clock::now() + options.grace;
        stopping = true;
      }
    }
    if (reaped) continue;
    if (kill_deadline && Clock::now() > *kill_deadline) {
      terminate_all(SIGKILL);
      kill_deadline.reset();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return first_failure;
}

std::vector<std::string> argv_without(const std::vector<std::string>& argv,
                                      const std::vector<std::string>& drop) {
  std::vector<std::string> out{"/proc/self/exe"};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    const bool dropped = std::any_of(drop.begin(), drop.end(), [&](const std::string& flag) {
      if (arg == flag) {
        ++i;  // and its value
        return true;
      }
      return arg.rfind(flag + "=", 0) == 0;
    });
    if (!dropped) out.push_back(arg);
  }
  return out;
}

}  // namespace graphloom::distributed
