// Test helpers.
#include "support/test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <link.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include "graphloom/base/error.h"

extern char** environ;

namespace graphloom::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = fs::temp_directory_path() /
          ("graphloom-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

fs::path shared_datasets_dir() {
  const fs::path dir = fs::path(GRAPHLOOM_SOURCE_DIR) / ".." / "shared" / "datasets";
  return fs::exists(dir) ? fs::canonical(dir) : fs::path();
}

double printed_number(const std::string& output, const std::string& label) {
  std::smatch match;
  if (!std::regex_search(output, match, std::regex(label + " ([-0-9.]+)"))) return -1;
  return std::stod(match[1]);
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

CommandResult run_graphloom(const std::string& arguments, const fs::path& cwd) {
  const std::string command =
      "cd '" + cwd.string() + "' && '" + std::string(GRAPHLOOM_BINARY) + "' " + arguments + " 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

::testing::AssertionResult make_quick_partition(const std::filesystem::path& dir) {
  for (const char* command : {"generate planted --out data --num-nodes 20000",
                              "partition --data data --parts 2 --method metis --out parts"}) {
    const CommandResult result = run_graphloom(command, dir);
    if (result.exit_code != 0) {
      return ::testing::AssertionFailure() << "graphloom " << command << ":\n" << result.output;
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<std::string> quick_training_flags() {
  return {"--eval", "sampled",  "--fanouts", "5,5",          "--lr",
          "0.01",   "--hidden", "64",        "--batch-size", "128"};
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& arguments,
                                     const std::vector<std::string>& environment,
                                     const fs::path& output, const std::vector<std::string>& prefix)
    : output_(output) {
  std::vector<std::string> argv = prefix;
  argv.push_back(GRAPHLOOM_BINARY);
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
  env.insert(env.end(), environment.begin(), environment.end());
  std::vector<char*> argv_pointers, env_pointers;
  for (std::string& s : argv) argv_pointers.push_back(s.data());
  for (std::string& s : env) env_pointers.push_back(s.data());
  argv_pointers.push_back(nullptr);
  env_pointers.push_back(nullptr);
  const std::string out = output.string();
  pid_ = ::fork();
  if (pid_ == 0) {
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execve(argv_pointers[0], argv_pointers.data(), env_pointers.data());
    ::_exit(127);
  }
}

BackgroundProcess::~BackgroundProcess() {
  if (exit_code_ < 0 && pid_ > 0) {
    // A guarded launcher's supervisor would run the job on without it: it goes first, and its
    // processes with it (PR_SET_PDEATHSIG).
    if (const int supervisor = supervisor_of(pid_); supervisor != pid_) ::kill(supervisor, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void BackgroundProcess::kill(int signal) { ::kill(pid_, signal); }

int BackgroundProcess::wait_for(double seconds) {
  eventually(
      [&] {
        int status = 0;
        if (exit_code_ >= 0 || ::waitpid(pid_, &status, WNOHANG) != pid_) return exit_code_ >= 0;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return true;
      },
      seconds);
  return exit_code_;
}

std::string BackgroundProcess::output() const {
  std::ifstream in(output_);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int free_port_range(int span) {
  static std::atomic<int> next{20000 + static_cast<int>(::getpid() % 500) * 20};
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int base = next.fetch_add(span + 1);
    if (base + span > 32000) next = 20000;
    bool all_free = true;
    for (int port = base; port < base + span && all_free; ++port) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(static_cast<uint16_t>(port));
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      all_free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
      ::close(fd);
    }
    if (all_free) return base;
  }
  return 0;
}

bool eventually(const std::function<bool()>& condition, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

fs::path write_loopback_ip_config(const fs::path& dir) {
  const int port = free_port_range(11);
  const fs::path path = dir / "ip.txt";
  std::ofstream ip(path);
  ip << "127.0.0.1 " << port << "\n127.0.0.1 " << port + 10 << "\n";
  return path;
}

bool write_self_signed_certificate(const fs::path& dir) {
  const std::string openssl = fmt::format(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -addext "
      "subjectAltName=IP:127.0.0.1,DNS:localhost -keyout '{}' -out '{}' > /dev/null 2>&1",
      (dir / "key.pem").string(), (dir / "cert.pem").string());
  return std::system(openssl.c_str()) == 0;
}

bool shared_memory_left(const std::string& cluster) {
  for (const auto& entry : fs::directory_iterator("/dev/shm")) {
    if (entry.path().filename().string().find(cluster) != std::string::npos) return true;
  }
  return false;
}

namespace {

// Its argv, each argument followed by a NUL.
std::string cmdline_of(int pid) {
  std::ifstream cmdline(fmt::format("/proc/{}/cmdline", pid));
  return {std::istreambuf_iterator<char>(cmdline), std::istreambuf_iterator<char>()};
}

}  // namespace

std::vector<int> children_running(int parent, const std::vector<std::string>& words) {
  std::ifstream children(fmt::format("/proc/{}/task/{}/children", parent, parent));
  std::vector<int> found;
  for (int child; children >> child;) {
    std::string text = cmdline_of(child);
    std::replace(text.begin(), text.end(), '\0', ' ');
    if (std::all_of(words.begin(), words.end(), [&](const std::string& word) {
          return text.find(word) != std::string::npos;
        })) {
      found.push_back(child);
    }
  }
  return found;
}

int supervisor_of(int pid) {
  const std::string own = cmdline_of(pid);
  std::ifstream children(fmt::format("/proc/{}/task/{}/children", pid, pid));
  for (int child; children >> child;) {
    if (cmdline_of(child) == own) return child;
  }
  return pid;
}

bool running(int pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text{std::istreambuf_iterator<char>(stat), std::istreambuf_iterator<char>()};
  const std::size_t name_end = text.rfind(')');
  return name_end != std::string::npos && name_end + 2 < text.size() && text[name_end + 2] != 'Z';
}

std::vector<std::string> loaded_objects_named(const std::string& part) {
  std::pair<std::string, std::vector<std::string>> search{part, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        auto& [wanted, found] =
            *static_cast<std::pair<std::string, std::vector<std::string>>*>(out);
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (name.find(wanted) != std::string::npos) found.push_back(name);
        return 0;
      },
      &search);
  return search.second;
}

}  // namespace graphloom::testing
