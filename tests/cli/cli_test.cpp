// The graphloom program end to end: exit codes, one-line errors, help for every subcommand.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.h"

namespace graphloom {
namespace {

using testing::run_graphloom;
using testing::TempDir;

TEST(Cli, HelpForEverySubcommand) {
  for (const char* command :
       {"", "inspect", "convert", "generate", "generate planted", "generate rmat", "bench",
        "bench load", "bench csc", "bench sample", "bench gather", "bench loader", "bench train",
        "bench aggregate", "bench dist", "train", "plot"}) {
    const auto result = run_graphloom(std::string(command) + " --help");
    EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.output;
    EXPECT_NE(result.output.find("Usage:"), std::string::npos) << command;
  }
  EXPECT_EQ(run_graphloom("--version").exit_code, 0);
}

TEST(Cli, BenchDistComparesDistGraphWithTheLocalGraphOnLoopbackServers) {
  const auto result =
      run_graphloom("--log-level warn bench dist --batches 2 --pull-rows 1000 --pull-calls 2");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* line : {"sample (fanouts 10,10,10", "loader (sample + features",
                           "rows pulled from remote parts", " 1 client(s)", "16 client(s)"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  EXPECT_EQ(result.output.find(": 0 MB per batch"), std::string::npos) << result.output;
}

TEST(Cli, UsageErrorsExitWithTwo) {
  auto result = run_graphloom("inspect --no-such-flag x");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--no-such-flag"), std::string::npos);
  EXPECT_EQ(run_graphloom("").exit_code, 2);
  result = run_graphloom("--log-level loud inspect x");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("--log-level must be one of trace,"), std::string::npos)
      << result.output;
  EXPECT_EQ(run_graphloom("convert --from zip a b").exit_code, 2);
  result = run_graphloom("convert --from edgelist --delimiter ab edges.csv out");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("--delimiter must be one character, 'tab' or 'space', got 'ab'"),
            std::string::npos)
      << result.output;
  // A size is read with the flags, before any work, and named by its flag.
  result = run_graphloom("train --cache-size 12Q");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--cache-size: '12Q' is not a size"), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("dataset"), std::string::npos) << result.output;
  // Checked before any work (the loaders would refuse it only after loading or sampling).
  for (const char* command : {"bench dist", "train"}) {
    result = run_graphloom(std::string(command) + " --workers 2 --prefetch 1");
    EXPECT_EQ(result.exit_code, 2) << command << ": " << result.output;
    EXPECT_NE(result.output.find("--prefetch (1) must be at least --workers (2)"),
              std::string::npos)
        << command << ": " << result.output;
    EXPECT_EQ(result.output.find("dataset"), std::string::npos)
        << command << " loaded data first: " << result.output;
  }
}

// The library names the options field (fanouts); the CLI says it as its flag, before loading.
TEST(Cli, LibraryOptionErrorsNameTheFlag) {
  const auto result = run_graphloom("train --fanouts 5,0");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("graphloom: --fanouts must be positive or -1 (all neighbors), got "
                               "5,0"),
            std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("dataset"), std::string::npos) << result.output;
}

// Out-of-range numbers are named in the user's terms, not as CLI11's range of doubles.
TEST(Cli, OutOfRangeFlagsSayWhatWasExpected) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"partition --data d --out o --parts 0", "--parts: must be greater than 0 (got 0)"},
      {"train --lr -1 --epochs 0", "--epochs: must be greater than 0 (got 0)"},
      {"train --dropout 1.5", "--dropout: must be between 0 and 1 (got 1.5)"},
      {"--threads -2 inspect x", "--threads: must be 0 or more (got -2)"},
      // Kind flags list their names, not CLI11's name->number map.
      {"partition --data d --out o --method spectral",
       "--method: must be one of metis, stream, random, got 'spectral'"},
      {"train --model transformer",
       "--model: must be one of sage, gcn, gat, mlp, rgcn, rsage, "
       "lightgcn, got 'transformer'"},
  };
  for (const auto& [command, message] : cases) {
    const auto result = run_graphloom(command);
    EXPECT_EQ(result.exit_code, 2) << command << ": " << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << command << ": " << result.output;
    EXPECT_EQ(result.output.find("1797693"), std::string::npos) << command << ": " << result.output;
  }
}

// A new user's mistake: a partition directory given as --data is named as such, with the flag
// that takes it.
TEST(Cli, TrainOnAPartitionDirectorySaysToUsePartConfig) {
  TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 1000 --out g", dir.path()).exit_code, 0);
  ASSERT_EQ(
      run_graphloom("partition --data g --parts 2 --method random --out p", dir.path()).exit_code,
      0);
  const auto result = run_graphloom("train --data p --epochs 1", dir.path());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--data p is a partition directory (it has partition.json), not a "
                               "dataset: train on it with --part-config p"),
            std::string::npos)
      << result.output;
  // Only the fields the message names become flags, not the same words in the user's path.
  std::filesystem::rename(dir.path() / "p", dir.path() / "data");
  const auto named = run_graphloom("train --data data/../data --epochs 1", dir.path());
  EXPECT_NE(named.output.find("--data data/../data is a partition directory"), std::string::npos)
      << named.output;
  EXPECT_NE(named.output.find("--part-config data/../data under `graphloom launch`"),
            std::string::npos)
      << named.output;
}

// The default batch of 1024 over a few hundred training nodes is one step per epoch: said.
TEST(Cli, TrainWarnsWhenTheRunTakesVeryFewOptimizerSteps) {
  TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 1000 --out g", dir.path()).exit_code, 0);
  const auto few =
      run_graphloom("train --data g --epochs 3 --eval sampled --no-progress", dir.path());
  EXPECT_EQ(few.exit_code, 0) << few.output;
  EXPECT_NE(few.output.find("this run takes only 3 optimizer steps (1 batch(es) of up to 1024 "
                            "per epoch x 3 epochs): too few for most models to fit. Raise the "
                            "epochs (about 100 for 100 steps) or lower the batch size"),
            std::string::npos)
      << few.output;
  const auto enough = run_graphloom(
      "train --data g --epochs 100 --fanouts 2 --eval-every 50 --eval sampled --no-progress",
      dir.path());
  EXPECT_EQ(enough.exit_code, 0) << enough.output;
  EXPECT_EQ(enough.output.find("optimizer steps"), std::string::npos) << enough.output;
}

TEST(Cli, FailuresPrintOneLineAndExitWithOne) {
  TempDir dir;
  const auto result = run_graphloom("inspect nowhere", dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.output, "graphloom: error: dataset directory 'nowhere' does not exist\n");
}

TEST(Cli, GenerateThenInspectFromAnotherDirectory) {
  TempDir dir;
  auto result = run_graphloom("generate planted --num-nodes 2000 --out g", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  result = run_graphloom("--log-level warn inspect " + (dir / "g").string() + " --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("\"num_nodes\": 2000"), std::string::npos) << result.output;
  // The existing output directory is refused without --force (a usage error), kept intact.
  result = run_graphloom("generate planted --num-nodes 2000 --out g", dir.path());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("already exists (pass --force"), std::string::npos);
  EXPECT_EQ(
      run_graphloom("generate planted --num-nodes 1000 --out g --force", dir.path()).exit_code, 0);
  // Without --out, a generator writes to the dataset's name.
  ASSERT_EQ(run_graphloom("generate rmat --scale 8", dir.path()).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rmat-8" / "metadata.json"));
}

TEST(Cli, ConvertAndInspectSharedCora) {
  GL_REQUIRE_SHARED_DATASET(cora, "cora");
  TempDir dir;
  auto result = run_graphloom("convert --from shared " + cora.string() + " cora", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  result = run_graphloom("inspect cora", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* expected : {"nodes       2708", "edges       10556", "float32 [2708, 1433]",
                               "7 classes", "train: 140", "valid: 500", "test: 1000"}) {
    EXPECT_NE(result.output.find(expected), std::string::npos) << expected << "\n" << result.output;
  }
}

}  // namespace
}  // namespace graphloom
