// The guardian of a job's supervisor (supervisor_guardian.h): fork, wait, reap the orphans,
// start again.
#include "supervisor_guardian.h"

#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "graphloom/base/error.h"
#include "process_status.h"

namespace graphloom::distributed {
namespace {

using Clock = std::chrono::steady_clock;

// One int in memory shared with the forked supervisor: the job's restart count survives it.
class SharedCount {
 public:
  SharedCount() {
    void* memory =
        ::mmap(nullptr, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    GL_CHECK(memory != MAP_FAILED, "cannot map the job's restart count: {}", std::strerror(errno));
    value_ = new (memory) int(0);
  }
  ~SharedCount() { ::munmap(value_, sizeof(int)); }
  SharedCount(const SharedCount&) = delete;
  SharedCount& operator=(const SharedCount&) = delete;
  int& value() { return *value_; }

 private:
  int* value_ = nullptr;
};

// The guardian is a subreaper only while it guards (a test process calls it too).
class Subreaper {
 public:
  Subreaper() {
    GL_CHECK(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "cannot become a child subreaper: {}",
             std::strerror(errno));
  }
  ~Subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
  Subreaper(const Subreaper&) = delete;
  Subreaper& operator=(const Subreaper&) = delete;
};

pid_t start_supervisor(const std::function<int(int&)>& supervise, int& restarts) {
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  GL_CHECK(pid >= 0, "cannot start the job's supervisor: fork failed: {}", std::strerror(errno));
  if (pid > 0) return pid;
  int code = 1;
  try {
    code = supervise(restarts);
  } catch (const std::exception& error) {
    spdlog::error("{}", error.what());
  }
  std::fflush(nullptr);
  ::_exit(code);
}

// Waits for the supervisor's end, forwarding a stop signal once, and reaps the orphans that a
// killed process below it leaves here meanwhile (a server supervisor's servers).
int wait_for_supervisor(pid_t supervisor) {
  bool forwarded = false;
  for (;;) {
    if (forwarded_signal() != 0 && !forwarded) {
      forwarded = true;
      ::kill(supervisor, forwarded_signal());
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == supervisor) return status;
    if (pid > 0) continue;
    GL_CHECK(pid == 0 || errno == EINTR, "waiting for the job's supervisor (pid {}): {}",
             supervisor, std::strerror(errno));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// This process's children (the orphans of a dead supervisor were reparented to one of its
// threads).
std::vector<pid_t> children() {
  std::vector<pid_t> found;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    std::ifstream list(task.path() / "children");
    for (pid_t child; list >> child;) found.push_back(child);
  }
  return found;
}

// After the supervisor's end: its processes were killed with it (PR_SET_PDEATHSIG) or are
// being stopped; waits until none is left, killing what still runs after the grace.
void reap_orphans(std::chrono::milliseconds grace) {
  const auto deadline = Clock::now() + grace;
  bool killed = false;
  for (;;) {
    const pid_t pid = ::waitpid(-1, nullptr, WNOHANG);
    if (pid > 0) continue;
    if (pid < 0 && errno != EINTR) return;  // ECHILD: none left
    if (!killed && Clock::now() > deadline) {
      killed = true;
      for (const pid_t child : children()) {
        ::kill(-child, SIGKILL);  // each leads its own process group (process_launcher.cpp)
        ::kill(child, SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

bool supervised_by_parent() {
  const char* supervisor = std::getenv(kSupervisorVariable);
  return supervisor != nullptr && std::atoi(supervisor) == static_cast<int>(::getppid());
}

int run_guarded(const std::function<int(int& restarts)>& supervise, const LaunchOptions& options) {
  SharedCount restarts;
  Subreaper subreaper;
  for (;;) {
    const pid_t supervisor = start_supervisor(supervise, restarts.value());
    const int status = wait_for_supervisor(supervisor);
    reap_orphans(options.grace);
    // A supervisor that exits returns the job's result; one killed (SIGKILL, a crash) is the
    // failure the guardian is for, unless it was stopping on a signal given to the job.
    if (!WIFSIGNALED(status) || forwarded_signal() != 0) return exit_code_of(status);
    if (restarts.value() >= options.max_restarts) {
      spdlog::error("the job's supervisor (pid {}) {} and no restart is left", supervisor,
                    describe_exit(status));
      return exit_code_of(status);
    }
    ++restarts.value();
    spdlog::error(
        "the job's supervisor (pid {}) {}: restart {} of {}: its processes, stopped with it, "
        "start again",
        supervisor, describe_exit(status), restarts.value(), options.max_restarts);
    if (options.before_restart) options.before_restart();
  }
}

}  // namespace graphloom::distributed
