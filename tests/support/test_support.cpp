// Test helpers.
#include "support/test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>

#include "graphloom/base/error.h"

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

}  // namespace graphloom::testing
