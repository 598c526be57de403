// `graphloom train` end to end: plots, checkpoints on a full disk, link prediction, LABOR,
// encoded features.
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
