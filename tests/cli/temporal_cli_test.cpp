// `train --temporal`: on a graph whose labels can only be read from the future, a model
// trained and evaluated with temporal sampling is at chance, and the same run without it
// reads the answer; what temporal sampling cannot serve is refused by name.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "graphloom/graph/build.h"
#include "graphloom/io/dataset.h"
#include "support/test_support.h"

namespace graphloom::testing {
namespace {

constexpr int64_t kSeeds = 1000;    // nodes 0..999, at times 0..999, with no features
constexpr int64_t kHelpers = 1000;  // nodes 1000..1999 carry a one-hot feature of their class
constexpr int64_t kPerSide = 8;     // in-edges per seed from the future and from the past

// Seed v has kPerSide in-edges from helpers of its own class at time 1e6 (the future) and
// kPerSide from helpers of random class at time -1 (the past): its label is in its future.
void write_leaky_dataset(const std::filesystem::path& dir) {
  at::manual_seed(11);
  const int64_t n = kSeeds + kHelpers;
  const at::Tensor labels = at::randint(2, {n}, at::kLong);
  const at::Tensor helper_class = labels.slice(0, kSeeds);
  std::vector<at::Tensor> src, dst;
  for (int64_t cls = 0; cls < 2; ++cls) {
    const at::Tensor same = (helper_class == cls).nonzero().squeeze(1) + kSeeds;
    const at::Tensor seeds = (labels.slice(0, 0, kSeeds) == cls).nonzero().squeeze(1);
    const at::Tensor pick = at::randint(same.numel(), {seeds.numel() * kPerSide}, at::kLong);
    src.push_back(same.index_select(0, pick));
    dst.push_back(seeds.repeat_interleave(kPerSide));
  }
  src.push_back(at::randint(kSeeds, n, {kSeeds * kPerSide}, at::kLong));
  dst.push_back(at::arange(kSeeds, at::kLong).repeat_interleave(kPerSide));
  const at::Tensor is_future = at::cat(
      {at::ones({kSeeds * kPerSide}, at::kBool), at::zeros({kSeeds * kPerSide}, at::kBool)});
  io::Dataset dataset;
  dataset.name = "leaky";
  dataset.graph =
      graph::csc_from_coo({.src = at::cat(src),
                           .dst = at::cat(dst),
                           .num_nodes = n,
                           .edge_time = at::where(is_future, int64_t{1000000}, int64_t{-1}),
                           .keep_edge_ids = false});
  at::Tensor features = at::zeros({n, 2}, at::kFloat);
  features.slice(0, kSeeds).scatter_(1, helper_class.unsqueeze(1), 1.0);
  dataset.node_features["feat"] = features;
  dataset.labels = labels;
  dataset.num_classes = 2;
  const at::Tensor order = at::randperm(kSeeds, at::kLong);
  dataset.splits = {{"train", order.slice(0, 0, 600)},
                    {"valid", order.slice(0, 600, 800)},
                    {"test", order.slice(0, 800)}};
  dataset.node_timestamp =
      at::cat({at::arange(kSeeds, at::kLong), at::full({kHelpers}, -1, at::kLong)});
  io::save_dataset(dataset, dir, /*overwrite=*/false);
}

double validation_accuracy(const std::string& output) {
  std::smatch match;
  if (!std::regex_search(output, match, std::regex("validation accuracy ([0-9.]+)"))) return -1;
  return std::stod(match[1]);
}

TEST(CliTemporal, AModelSamplingThePastCannotReadTheFuture) {
  TempDir dir;
  write_leaky_dataset(dir / "leaky");
  const std::string train =
      "train --data leaky --epochs 15 --fanouts 10 --hidden 16 --lr 0.02 --batch-size 64 "
      "--no-progress --seed 2 ";
  const CommandResult leaky = run_graphloom(train, dir.path());
  ASSERT_EQ(leaky.exit_code, 0) << leaky.output;
  EXPECT_GT(validation_accuracy(leaky.output), 0.9) << leaky.output;
  for (const char* strategy : {"uniform", "last"}) {
    const CommandResult timed =
        run_graphloom(train + "--temporal --temporal-strategy " + strategy, dir.path());
    ASSERT_EQ(timed.exit_code, 0) << timed.output;
    const double accuracy = validation_accuracy(timed.output);
    EXPECT_GE(accuracy, 0) << timed.output;
    EXPECT_LT(accuracy, 0.7) << strategy << ": the future leaked\n" << timed.output;
  }
}

TEST(CliTemporal, WhatItCannotServeIsRefusedByName) {
  TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 500 --out g", dir.path()).exit_code, 0);
  for (const char* flags :
       {"--data g --temporal",  // no node_timestamp
        "--data g --temporal --sampler labor", "--data g --temporal --task link"}) {
    const CommandResult result =
        run_graphloom(std::string("train --epochs 1 --no-progress ") + flags, dir.path());
    EXPECT_EQ(result.exit_code, 2) << flags << "\n" << result.output;
    EXPECT_NE(result.output.find("--temporal"), std::string::npos) << flags << "\n"
                                                                   << result.output;
  }
}

}  // namespace
}  // namespace graphloom::testing
