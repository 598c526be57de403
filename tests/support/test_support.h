// Test helpers: a self-removing temporary directory, the shared datasets, running the CLI.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace graphloom::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// How much slower code runs here than in a plain build: deadlines in tests are multiplied by it
// (TSan's instrumentation makes RPC-heavy tests about 10x slower, ASan's about 2x).
#if defined(__SANITIZE_THREAD__)
inline constexpr int kSlowdown = 10;
#elif defined(__SANITIZE_ADDRESS__)
inline constexpr int kSlowdown = 3;
#else
inline constexpr int kSlowdown = 1;
#endif

// The cluster token of the loopback servers that tests start.
inline constexpr const char* kClusterToken = "cluster-secret";

// ../shared/datasets relative to the repository root (empty when absent).
std::filesystem::path shared_datasets_dir();

// Skips the calling test (reported as SKIPPED, never a silent pass) when the shared dataset
// `name` is absent; otherwise returns its folder.
#define GL_REQUIRE_SHARED_DATASET(var, name)                                                \
  const std::filesystem::path var = ::graphloom::testing::shared_datasets_dir() / name;     \
  if (::graphloom::testing::shared_datasets_dir().empty() || !std::filesystem::exists(var)) \
  GTEST_SKIP() << "../shared/datasets/" << name << " is absent"

// The message of the graphloom::Error that `fn` throws, or "" when it throws none.
std::string error_of(const std::function<void()>& fn);

// The number a command printed after `label` (e.g. "validation accuracy"), or -1 when it
// printed none.
double printed_number(const std::string& output, const std::string& label);

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs the built `graphloom` binary with `arguments` (a shell-quoted string) in `cwd`.
CommandResult run_graphloom(const std::string& arguments,
                            const std::filesystem::path& cwd = std::filesystem::current_path());

// The small partitioned job of the CLI tests: a planted graph of 20k nodes in `dir`/data, in 2
// METIS parts in `dir`/parts. Returns false (with the command's output) on failure.
::testing::AssertionResult make_quick_partition(const std::filesystem::path& dir);
// `train` flags for it: a few seconds per epoch, and accurate enough to assert > 0.9.
std::vector<std::string> quick_training_flags();

// A `graphloom` process running in the background, its output going to a file.
class BackgroundProcess {
 public:
  // Starts the built binary with `arguments` (argv without the program) and extra `environment`
  // entries ("NAME=value"); stdout and stderr go to `output`.
  // A non-empty `prefix` runs the binary through it (e.g. {"/usr/sbin/ip", "netns", "exec",
  // "ns1"}).
  BackgroundProcess(const std::vector<std::string>& arguments,
                    const std::vector<std::string>& environment,
                    const std::filesystem::path& output,
                    const std::vector<std::string>& prefix = {});
  ~BackgroundProcess();  // kills the process if it still runs
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  int pid() const { return pid_; }
  void kill(int signal);
  // The exit code (128 + signal when killed), or -1 when still running after `seconds`.
  int wait_for(double seconds);
  std::string output() const;

 private:
  int pid_ = -1;
  int exit_code_ = -1;
  std::filesystem::path output_;
};

// A base port such that base .. base+span-1 are free on 127.0.0.1, chosen below Linux's
// ephemeral range (32768+), so that no outgoing connection of a concurrent test takes one of
// them between this call and the server's bind.
int free_port_range(int span = 1);

// Polls `condition` every 50 ms for up to `seconds`; returns whether it became true.
bool eventually(const std::function<bool()>& condition, double seconds);

// `dir`/ip.txt: 2 loopback machines, their servers' ports 10 apart; returns its path.
std::filesystem::path write_loopback_ip_config(const std::filesystem::path& dir);
// `dir`/cert.pem and `dir`/key.pem: a self-signed certificate for localhost and 127.0.0.1 (one
// day), made by openssl; false when openssl failed.
bool write_self_signed_certificate(const std::filesystem::path& dir);
// Whether /dev/shm holds a segment of `cluster`.
bool shared_memory_left(const std::string& cluster);
// The children of `parent` whose command line contains every one of `words`.
std::vector<int> children_running(int parent, const std::vector<std::string>& words);

// The supervisor of a guarded launcher (`--max-restarts`: process_launcher.h): the child of
// `pid` with the same command line. `pid` itself when it has none.
int supervisor_of(int pid);

// Whether process `pid` exists and has not exited (a zombie has).
bool running(int pid);

// Paths of the shared objects loaded in this process whose path contains `part` ("libgomp").
std::vector<std::string> loaded_objects_named(const std::string& part);

}  // namespace graphloom::testing
