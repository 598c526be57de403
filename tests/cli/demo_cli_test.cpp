// `graphloom demo`, the main job, on a small graph: the whole pipeline runs (generate,
// partition, 2 loopback machines of 2 servers and a trainer, data-parallel training), the
// summary names the figures and the files, the graph beats its features alone, and nothing
// is left running or in shared memory; an existing --out needs --force.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "support/test_support.h"

namespace graphloom::testing {
namespace {

TEST(CliDemo, RunsTheWholeSystemAndReportsWhereEverythingWent) {
  const TempDir dir;
  const CommandResult result =
      run_graphloom("demo --out d --num-nodes 30000 --epochs 4", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* line : {"2 loopback machines x (2 graph servers + 1 trainer)",
                           "seeds/s over 2 trainers", "trainer 0 (s)    sample", "d/parts",
                           "d/checkpoint.pt", "d/metrics.jsonl (per epoch), d/result.json"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  std::smatch match;
  ASSERT_TRUE(std::regex_search(result.output, match,
                                std::regex("test accuracy +([0-9.]+) +\\(the features alone, "
                                           "nearest class centroid: ([0-9.]+)\\)")))
      << result.output;
  // The graph carries what the noisy features alone do not.
  EXPECT_GT(std::stod(match[1]), std::stod(match[2]) + 0.2) << result.output;
  for (const char* file : {"d/data/metadata.json", "d/parts/partition.json", "d/checkpoint.pt",
                           "d/result.json", "d/token"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / file)) << file;
  }
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    EXPECT_EQ(entry.path().filename().string().find("graphloom-demo-"), std::string::npos)
        << entry.path();
  }
  const CommandResult again = run_graphloom("demo --out d --num-nodes 30000", dir.path());
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.output.find("'d' already exists (pass --force to replace it)"), std::string::npos)
      << again.output;
}

}  // namespace
}  // namespace graphloom::testing
