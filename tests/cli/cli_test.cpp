// The graphloom program end to end: exit codes, one-line errors, help for every subcommand.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

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

namespace graphloom {
namespace {

using testing::run_graphloom;

TEST(CliTrain, TrainsAndPlots) {
  testing::TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 3000 --out g", dir.path()).exit_code, 0);
  auto result = run_graphloom(
      "train --data g --epochs 2 --fanouts 5,5 --hidden 16 --no-progress --metrics-log m.jsonl "
      "--checkpoint c.pt",
      dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("test accuracy"), std::string::npos) << result.output;
  result = run_graphloom(
      "train --data g --epochs 3 --fanouts 5,5 --hidden 16 --no-progress "
      "--metrics-log m.jsonl --checkpoint c.pt --resume",
      dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // Epochs counted as the console lines count them: 2 were done, epoch 3 runs.
  EXPECT_NE(result.output.find("resumed from 'c.pt' after epoch 2"), std::string::npos)
      << result.output;
  result = run_graphloom("plot m.jsonl -o curves.svg", dir.path());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "curves.svg"));
  EXPECT_EQ(run_graphloom("train --data g --resume", dir.path()).exit_code, 2);
  EXPECT_EQ(run_graphloom("train --data g --model transformer", dir.path()).exit_code, 2);
}

// A checkpoint on a full disk (a 1 MiB tmpfs): a warning naming the file and ENOSPC, training
// to the end, the previous checkpoint intact and no temporary left; with
// --on-checkpoint-failure stop, exit 1 with the same message.
TEST(CliTrain, ACheckpointOnAFullDiskWarnsAndKeepsThePreviousOne) {
  testing::TempDir dir;
  const std::filesystem::path full = dir / "full";
  std::filesystem::create_directory(full);
  if (::geteuid() != 0 || std::system(fmt::format("mount -t tmpfs -o size=1m tmpfs '{}' "
                                                  "2>/dev/null",
                                                  full.string())
                                          .c_str()) != 0) {
    GTEST_SKIP() << "SKIPPED: mounting a 1 MiB tmpfs needs root (and a mount namespace that "
                    "allows it)";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { std::system(fmt::format("umount '{}'", path).c_str()); }
  } unmount{full.string()};
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 2000 --feat-dim 16 --out g", dir.path())
                .exit_code,
            0);
  const std::string train =
      "train --data g --fanouts 5,5 --hidden 16 --no-progress --checkpoint full/run.pt";
  auto result = run_graphloom(train + " --epochs 1", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto good = std::filesystem::file_size(full / "run.pt");
  {  // Fill the tmpfs, leaving less than a checkpoint.
    const std::filesystem::space_info space = std::filesystem::space(full);
    std::ofstream filler(full / "filler", std::ios::binary);
    filler << std::string(space.available - good / 2, 'x');
  }
  result = run_graphloom(train + " --epochs 3 --resume", dir.path());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("cannot write checkpoint 'full/run.pt': No space left on device"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("test accuracy"), std::string::npos) << result.output;
  result = run_graphloom(train + " --epochs 3 --resume --on-checkpoint-failure stop", dir.path());
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("cannot write checkpoint 'full/run.pt': No space left on device"),
            std::string::npos)
      << result.output;
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(full)) {
    files.insert(entry.path().filename().string());
  }
  EXPECT_EQ(files, (std::set<std::string>{"filler", "run.pt"}));  // no temporary
  EXPECT_EQ(std::filesystem::file_size(full / "run.pt"), good);
  std::filesystem::remove(full / "filler");
  result = run_graphloom(train + " --epochs 2 --resume", dir.path());  // the kept one resumes
  EXPECT_NE(result.output.find("resumed from 'full/run.pt' after epoch 1"), std::string::npos)
      << result.output;
}

// Link prediction from the command line: splits made by convert, or the fixed splits of an
// lp_* dataset, where the model must beat the common-neighbour heuristic it reports.
TEST(CliTrain, LinkPredictionOnMadeAndFixedSplits) {
  testing::TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 2000 --out g", dir.path()).exit_code, 0);
  auto result =
      run_graphloom("convert --from graphloom g g-link --link-split 0.05,0.1", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  result = run_graphloom(
      "train --data g-link --task link --fanouts 5,5 --epochs 3 --hidden 16 --no-progress",
      dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("test AUC"), std::string::npos) << result.output;
  result = run_graphloom("train --data g --task link --epochs 1 --no-progress", dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("has no 'train' edge split"), std::string::npos) << result.output;
  EXPECT_EQ(run_graphloom("convert --from graphloom g g2 --link-split 0.1", dir.path()).exit_code,
            2);

  GL_REQUIRE_SHARED_DATASET(usair, "lp_usair");
  ASSERT_EQ(
      run_graphloom("convert --from shared " + usair.string() + " usair", dir.path()).exit_code, 0);
  result = run_graphloom(
      "train --data usair --task link --model sage --fanouts -1,-1 --epochs 200 --lr 0.01 "
      "--batch-size 256 --hidden 64 --scorer mlp --eval-every 10 --no-progress",
      dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto at = result.output.find("test AUC ");
  const auto baseline = result.output.find("common neighbours AUC ");
  ASSERT_TRUE(at != std::string::npos && baseline != std::string::npos) << result.output;
  EXPECT_GT(std::stod(result.output.substr(at + 9, 6)),
            std::stod(result.output.substr(baseline + 22, 6)))
      << result.output;
}

// Features re-encoded as int8 (row scales) and bfloat16 train like the float32 original, with
// bf16 autocast and checkpointed layers too.
// LABOR-0 (with and without its dependencies) trains to the neighbor sampler's accuracy, and
// the sampler's flags are refused where they do not apply.
TEST(CliTrain, LaborTrainsAsWellAsNeighborSampling) {
  testing::TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 3000 --out g", dir.path()).exit_code, 0);
  // The mean test accuracy of 3 seeds: LABOR's kept counts vary per node, so single runs
  // that stop early scatter by a few points either way.
  auto accuracy = [&](const std::string& flags) {
    double sum = 0;
    for (const int seed : {1, 2, 3}) {
      const auto result = run_graphloom(
          fmt::format("train --data g --epochs 10 --batch-size 128 --lr 0.01 --fanouts 5,5 "
                      "--hidden 32 --no-progress --seed {} {}",
                      seed, flags),
          dir.path());
      EXPECT_EQ(result.exit_code, 0) << result.output;
      const auto at = result.output.find("test accuracy ");
      sum += at == std::string::npos ? 0.0 : std::stod(result.output.substr(at + 14, 6));
    }
    return sum / 3;
  };
  const double reference = accuracy("");
  EXPECT_GT(reference, 0.9);
  EXPECT_NEAR(accuracy("--sampler labor"), reference, 0.03);
  EXPECT_NEAR(accuracy("--sampler labor --layer-dependency --batch-dependency 8"), reference, 0.03);
  EXPECT_NEAR(accuracy("--sampler labor --importance-sampling -1"), reference, 0.03);
  auto result = run_graphloom(
      "train --data g --sampler labor --graph-placement device --batch-dependency 8", dir.path());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--graph-placement cpu"), std::string::npos) << result.output;
  result = run_graphloom("train --data g --sampler labor --batch-dependency 0", dir.path());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--batch-dependency"), std::string::npos) << result.output;
  result = run_graphloom("train --data g --importance-sampling 1", dir.path());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--sampler labor"), std::string::npos) << result.output;
}

TEST(CliTrain, EncodedFeaturesBfloat16AndCheckpointingTrainAsWellAsFloat32) {
  testing::TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 3000 --out g", dir.path()).exit_code, 0);
  for (const char* dtype : {"int8", "bfloat16"}) {
    const auto converted = run_graphloom(
        fmt::format("convert --from graphloom g g-{} --feature-dtype {}", dtype, dtype),
        dir.path());
    ASSERT_EQ(converted.exit_code, 0) << converted.output;
  }
  const auto inspected = run_graphloom("inspect g-int8", dir.path());
  EXPECT_NE(inspected.output.find("feature     feat: int8 [3000, 32] x row scale"),
            std::string::npos)
      << inspected.output;
  auto accuracy = [&](const std::string& flags) {
    const auto result = run_graphloom(
        "train --epochs 5 --batch-size 128 --lr 0.01 --fanouts 5,5 --hidden 32 --no-progress "
        "--seed 1 " +
            flags,
        dir.path());
    EXPECT_EQ(result.exit_code, 0) << result.output;
    const auto at = result.output.find("test accuracy ");
    return at == std::string::npos ? 0.0 : std::stod(result.output.substr(at + 14, 6));
  };
  const double reference = accuracy("--data g");
  EXPECT_GT(reference, 0.8);
  EXPECT_NEAR(accuracy("--data g-int8"), reference, 0.03);
  EXPECT_NEAR(accuracy("--data g-bfloat16"), reference, 0.03);
  EXPECT_NEAR(accuracy("--data g --precision bf16"), reference, 0.03);
  EXPECT_NEAR(accuracy("--data g --precision fp16"), reference, 0.03);
  // On the CPU every placement is a plain gather: the rows read through DeviceRows train as
  // the loader's do.
  EXPECT_NEAR(accuracy("--data g --feature-placement device"), reference, 0.01);
  // A device cache of a quarter of the rows (3000 x 32 float32 = 384 KB) serves some of the
  // reads and changes nothing of the result.
  const auto cached = run_graphloom(
      "train --data g --epochs 2 --batch-size 128 --fanouts 5,5 --hidden 32 --no-progress "
      "--feature-placement cpu --device-cache-size 96K --result-json cached.json",
      dir.path());
  EXPECT_EQ(cached.exit_code, 0) << cached.output;
  const nlohmann::json cached_result =
      nlohmann::json::parse(std::ifstream(dir.path() / "cached.json"));
  const double hit_rate = cached_result["counters"]["device_cache_hit_rate"].get<double>();
  EXPECT_GT(hit_rate, 0.25);  // the top quarter by degree serves more than a quarter of reads
  EXPECT_LT(hit_rate, 1.0);
  EXPECT_NE(cached.output.find("device feature cache on cpu: 768 of 3000 rows, hit rate"),
            std::string::npos)
      << cached.output;
  // int8 rows go to the device as stored and are decoded there: the same run.
  EXPECT_EQ(accuracy("--data g-int8 --feature-placement pinned --device-cache-size 24K"),
            accuracy("--data g-int8"));
  const auto placed_from_disk = run_graphloom(
      "train --data g --feature-storage disk --feature-placement pinned --epochs 1", dir.path());
  EXPECT_EQ(placed_from_disk.exit_code, 2) << placed_from_disk.output;
  EXPECT_NE(placed_from_disk.output.find("--feature-placement pinned needs the 'feat' matrix "
                                         "in this process's memory"),
            std::string::npos)
      << placed_from_disk.output;
  EXPECT_NEAR(accuracy("--data g --checkpoint-layers"), reference, 0.03);
  EXPECT_EQ(
      run_graphloom("convert --from graphloom g g2 --feature-dtype int4", dir.path()).exit_code, 2);
  EXPECT_EQ(
      run_graphloom("train --data g --cache-policy sieve --cache-size 1M", dir.path()).exit_code,
      2);
}

}  // namespace
}  // namespace graphloom

namespace graphloom {
namespace {

TEST(CliPartition, PartitionThenInspect) {
  testing::TempDir dir;
  ASSERT_EQ(
      testing::run_graphloom("generate planted --num-nodes 3000 --out g", dir.path()).exit_code, 0);
  auto result =
      testing::run_graphloom("partition --data g --parts 3 --balance-train --out p", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("edge cut"), std::string::npos);
  result = testing::run_graphloom("inspect p", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("3 parts by metis"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("imbalance"), std::string::npos);
  EXPECT_EQ(testing::run_graphloom("partition --data g --parts 3 --out p", dir.path()).exit_code,
            2);
  // More parts than nodes is a bad flag value: a usage error naming the flag and the bound.
  result = testing::run_graphloom("partition --data g --parts 5000 --out q", dir.path());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--parts must be in [1, num_nodes = 3000], got 5000"),
            std::string::npos)
      << result.output;
}

// The "edges" figure of the partition table's imbalance line, or -1.
double edge_imbalance_of(const std::string& output) {
  const auto at = output.find("imbalance (max / mean)");
  if (at == std::string::npos) return -1;
  const auto edges = output.find("edges ", at);
  return edges == std::string::npos ? -1 : std::stod(output.substr(edges + 6));
}

// A power-law graph: every phase says what it did and how long it took, the estimate gives a
// time, and streaming with --balance-edges evens out the part that holds the hubs.
TEST(CliPartition, SkewedGraphPhasesEstimateAndEdgeBalance) {
  testing::TempDir dir;
  ASSERT_EQ(testing::run_graphloom("generate rmat --scale 13 --out g", dir.path()).exit_code, 0);
  auto result = testing::run_graphloom("partition --data g --parts 4 --out p", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* line : {"expected time", "without (placed after METIS)", "4 parts by recursive",
                           "relabelled 8192 nodes into part order", "part 4/4"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  result =
      testing::run_graphloom("partition --data g --parts 4 --method stream --out s", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const double nodes_only = edge_imbalance_of(result.output);
  result = testing::run_graphloom(
      "partition --data g --parts 4 --method stream --balance-edges --out b", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const double balanced = edge_imbalance_of(result.output);
  EXPECT_GT(nodes_only, 1.3) << "R-MAT's hubs should unbalance a nodes-only stream";
  EXPECT_GT(balanced, 0);
  EXPECT_LE(balanced, 1.1) << result.output;
}

}  // namespace
}  // namespace graphloom
