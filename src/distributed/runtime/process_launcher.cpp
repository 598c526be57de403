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
#include "process_status.h"
#include "supervisor_guardian.h"

extern char** environ;

namespace graphloom::distributed {
namespace {

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
  std::map<std::string, std::string> environment = spec.environment;
  environment[kSupervisorVariable] = std::to_string(::getpid());
  std::vector<std::string> env = merged_environment(environment);
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

using Clock = std::chrono::steady_clock;

// One run_processes call: the processes, their pids (-1: not running) and the job's state.
class Supervisor {
 public:
  Supervisor(std::vector<ProcessSpec> specs, const LaunchOptions& options, int& restarts)
      : specs_(std::move(specs)),
        options_(options),
        pids_(specs_.size(), -1),
        restarts_(restarts),
        has_workers_(std::any_of(specs_.begin(), specs_.end(),
                                 [](const ProcessSpec& spec) { return !spec.service; })) {}

  int run() {
    try {
      for (std::size_t i = 0; i < specs_.size(); ++i) {
        // Started again by a guardian: every process continues the job.
        if (restarts_ > 0) specs_[i].environment[kRestartCountVariable] = std::to_string(restarts_);
        start(i);
      }
      while (running() > 0 || restarting_group_) step();
    } catch (...) {
      signal_all(SIGKILL, /*group_only=*/false);
      for (const pid_t pid : pids_) {
        if (pid > 0) ::waitpid(pid, nullptr, 0);
      }
      throw;
    }
    return result_;
  }

 private:
  void start(std::size_t i) { pids_[i] = spawn(specs_[i]); }

  std::size_t running() const {
    return static_cast<std::size_t>(
        std::count_if(pids_.begin(), pids_.end(), [](pid_t pid) { return pid > 0; }));
  }

  // Whether a process for which `selected(spec)` holds is running.
  template <class Predicate>
  bool any_running(Predicate selected) const {
    for (std::size_t i = 0; i < pids_.size(); ++i) {
      if (pids_[i] > 0 && selected(specs_[i])) return true;
    }
    return false;
  }

  void signal_all(int signal, bool group_only) {
    for (std::size_t i = 0; i < pids_.size(); ++i) {
      if (pids_[i] > 0 && (!group_only || specs_[i].in_process_group)) ::kill(-pids_[i], signal);
    }
  }

  // Stops everything: after the last failure, a forwarded signal, or the job's end.
  void tear_down(int signal) {
    signal_all(signal, /*group_only=*/false);
    kill_deadline_ = Clock::now() + options_.grace;
    stopping_ = true;
    restarting_group_ = false;
  }

  void step() {
    if (forwarded_signal() != 0 && !forwarded_) {
      forwarded_ = true;
      spdlog::warn("received {}: stopping {} process(es)", ::strsignal(forwarded_signal()),
                   running());
      if (result_ == 0) result_ = 128 + forwarded_signal();
      tear_down(forwarded_signal());
    }
    bool reaped = false;
    for (std::size_t i = 0; i < pids_.size(); ++i) {
      int status = 0;
      if (pids_[i] <= 0 || ::waitpid(pids_[i], &status, WNOHANG) != pids_[i]) continue;
      reaped = true;
      on_exit(i, std::exchange(pids_[i], -1), status);
    }
    const auto in_group = [](const ProcessSpec& spec) { return spec.in_process_group; };
    if (restarting_group_ && !any_running(in_group)) return restart_group();
    // The job is done when only services are left: stop them. A job of services only runs
    // until it is told to stop.
    const auto worker = [](const ProcessSpec& spec) { return !spec.service; };
    if (has_workers_ && !stopping_ && !restarting_group_ && running() > 0 && !any_running(worker)) {
      spdlog::info("job done: stopping {} service process(es)", running());
      tear_down(SIGTERM);
    }
    if (reaped) return;
    if (kill_deadline_ && Clock::now() > *kill_deadline_) {
      signal_all(SIGKILL, /*group_only=*/!stopping_);
      kill_deadline_.reset();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  void on_exit(std::size_t i, pid_t pid, int status) {
    const ProcessSpec& spec = specs_[i];
    if (stopping_ || (restarting_group_ && spec.in_process_group)) return;  // stopped by us
    const int code = exit_code_of(status);
    // A service ending by itself, while the job still runs, is a failure whatever its code.
    if (code == 0 && !spec.service) return;
    if (restarts_ < options_.max_restarts) {
      ++restarts_;
      spdlog::error("{} (pid {}) {}: restart {} of {}", spec.name, pid, describe_exit(status),
                    restarts_, options_.max_restarts);
      if (!spec.in_process_group) {
        specs_[i].environment[kRestartCountVariable] = std::to_string(restarts_);
        return start(i);
      }
      // The other ranks' process group is broken: stop them, then start all again.
      restarting_group_ = true;
      signal_all(SIGTERM, /*group_only=*/true);
      kill_deadline_ = Clock::now() + options_.grace;
      return;
    }
    result_ = code != 0 ? code : 1;
    spdlog::error("{} (pid {}) {}{}: stopping the other {} process(es)", spec.name, pid,
                  describe_exit(status), options_.max_restarts > 0 ? " and no restart is left" : "",
                  running());
    tear_down(SIGTERM);
  }

  void restart_group() {
    restarting_group_ = false;
    kill_deadline_.reset();
    std::size_t ranks = 0;
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      if (!specs_[i].in_process_group) continue;
      specs_[i].environment[kRestartCountVariable] = std::to_string(restarts_);
      start(i);
      ++ranks;
    }
    spdlog::info("restarted the {} rank(s) of the process group (restart {} of {})", ranks,
                 restarts_, options_.max_restarts);
  }

  std::vector<ProcessSpec> specs_;
  const LaunchOptions& options_;
  std::vector<pid_t> pids_;
  int& restarts_;  // the job's, shared with a guardian
  const bool has_workers_;
  int result_ = 0;
  bool forwarded_ = false;
  bool stopping_ = false;          // tearing down: what exits now is not a failure
  bool restarting_group_ = false;  // the ranks were told to stop, to start them again
  std::optional<Clock::time_point> kill_deadline_;
};

}  // namespace

int run_processes(std::vector<ProcessSpec> processes, const LaunchOptions& options) {
  SignalForwarding forwarding;
  const auto supervise = [&](int& restarts) {
    return Supervisor(processes, options, restarts).run();  // a copy per start
  };
  if (options.guard && options.max_restarts > 0 && !supervised_by_parent()) {
    return run_guarded(supervise, options);
  }
  int restarts = 0;
  return supervise(restarts);
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
