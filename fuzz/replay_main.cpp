// The main() of a fuzz target outside libFuzzer (GCC builds, ctest): runs every file given, or
// every file of every directory given, through LLVMFuzzerTestOneInput once. The seed corpora and
// the crashers kept as regressions (fuzz/corpus/<target>/) replay this way in every test run.
// `--random SECONDS` then feeds it random inputs for that long (not coverage-guided, as
// libFuzzer under scripts/fuzz.sh is): random bytes with int64 values from the edges of the
// range (0, +-1, 2^31, 2^62, INT64_MIN/MAX) laid at 8-byte offsets, from a seed it prints.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size);

namespace {

void replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

std::size_t run_random(double seconds, uint64_t seed) {
  constexpr int64_t kEdges[] = {0,
                                1,
                                -1,
                                2,
                                5,
                                int64_t{1} << 20,
                                (int64_t{1} << 20) + 1,
                                int64_t{1} << 31,
                                int64_t{1} << 62,
                                (int64_t{1} << 62) + 1,
                                std::numeric_limits<int64_t>::max(),
                                std::numeric_limits<int64_t>::min()};
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::size_t inputs = 0;
  std::string bytes;
  while (std::chrono::steady_clock::now() < end) {
    bytes.resize(1 + rng() % 200);
    for (char& byte : bytes) byte = static_cast<char>(rng());
    for (std::size_t at = 1; at + 8 <= bytes.size(); at += 8) {
      if (rng() % 2 == 0) continue;
      const int64_t value =
          rng() % 3 == 0 ? static_cast<int64_t>(rng() % 64) : kEdges[rng() % std::size(kEdges)];
      std::memcpy(bytes.data() + at, &value, sizeof(value));
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++inputs;
  }
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--random" && i + 1 < argc) {
      const uint64_t seed = std::random_device{}();
      std::printf("random inputs from seed %llu\n", static_cast<unsigned long long>(seed));
      const std::size_t random = run_random(std::stod(argv[++i]), seed);
      std::printf("ran %zu random input(s)\n", random);
      inputs += random;
      continue;
    }
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& file : files) replay(file), ++inputs;
    } else {
      replay(path), ++inputs;
    }
  }
  std::printf("replayed %zu input(s)\n", inputs);
  return inputs > 0 ? 0 : 1;
}
