// The scratch directory and the small valid dataset and partition of fuzz_support.h.
#include "fuzz_support.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "graphloom/base/logging.h"
#include "graphloom/io/generators.h"
#include "graphloom/partition/partition_job.h"

namespace graphloom::fuzz {
namespace fs = std::filesystem;

namespace {

struct ScratchDir {
  ScratchDir() {
    // Quiet: every rejected input would otherwise log its error.
    set_log_level("off");
    const char* tmp = std::getenv("TMPDIR");
    path = fs::path(tmp != nullptr && *tmp ? tmp : "/tmp") /
           ("graphloom-fuzz-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path path;
};

}  // namespace

const fs::path& scratch_dir() {
  static const ScratchDir dir;
  return dir.path;
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string_view> split_input(const uint8_t* data, std::size_t size,
                                          std::size_t parts) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> pieces;
  std::size_t begin = 0;
  while (pieces.size() + 1 < parts) {
    const std::size_t end = input.find('\0', begin);
    if (end == std::string_view::npos) break;
    pieces.push_back(input.substr(begin, end - begin));
    begin = end + 1;
  }
  pieces.push_back(begin <= input.size() ? input.substr(begin) : std::string_view());
  pieces.resize(parts);
  return pieces;
}

const fs::path& tiny_dataset() {
  static const fs::path dir = [] {
    const fs::path path = scratch_dir() / "dataset";
    io::save_dataset(io::generate_planted({.num_nodes = 60, .num_classes = 3, .feat_dim = 4}), path,
                     /*overwrite=*/true);
    return path;
  }();
  return dir;
}

const fs::path& tiny_partition() {
  static const fs::path dir = [] {
    const fs::path path = scratch_dir() / "parts";
    partition::partition_dataset(io::load_dataset(tiny_dataset()),
                                 {.data = tiny_dataset().string(),
                                  .out = path.string(),
                                  .parts = 2,
                                  .method = partition::PartitionMethod::kRandom,
                                  .force = true});
    return path;
  }();
  return dir;
}

}  // namespace graphloom::fuzz
