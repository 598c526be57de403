// `train --temporal`: on a graph whose labels can only be read from the future (typed or not),
// a model trained and evaluated with temporal sampling is at chance, and the same run without
// it reads the answer; what temporal sampling cannot serve is refused by name.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "cli/leaky_dataset.h"
#include "support/test_support.h"

namespace graphloom::testing {
namespace {

TEST(CliTemporal, AModelSamplingThePastCannotReadTheFuture) {
  TempDir dir;
  write_leaky_dataset(dir / "leaky");
  const std::string train =
      "train --data leaky --epochs 15 --fanouts 10 --hidden 16 --lr 0.02 --batch-size 64 "
      "--no-progress --seed 2 ";
  const CommandResult leaky = run_graphloom(train, dir.path());
  ASSERT_EQ(leaky.exit_code, 0) << leaky.output;
  EXPECT_GT(printed_number(leaky.output, "validation accuracy"), 0.9) << leaky.output;
  for (const char* strategy : {"uniform", "last"}) {
    const CommandResult timed =
        run_graphloom(train + "--temporal --temporal-strategy " + strategy, dir.path());
    ASSERT_EQ(timed.exit_code, 0) << timed.output;
    const double accuracy = printed_number(timed.output, "validation accuracy");
    EXPECT_GE(accuracy, 0) << timed.output;
    EXPECT_LT(accuracy, 0.7) << strategy << ": the future leaked\n" << timed.output;
    // Sampled by the tensor-op sampler (the device path, here on the CPU): the same run.
    const CommandResult placed = run_graphloom(
        train + "--temporal --graph-placement device --temporal-strategy " + strategy, dir.path());
    ASSERT_EQ(placed.exit_code, 0) << placed.output;
    EXPECT_EQ(printed_number(placed.output, "validation accuracy"), accuracy) << placed.output;
  }
}

// The same on a typed graph with a relational model: each edge type's segment of a column is
// sampled among its own past edges, with per-edge-type fanouts.
TEST(CliTemporal, RelationalModelsOnATypedGraphCannotReadTheFutureEither) {
  TempDir dir;
  write_leaky_dataset(dir / "leaky", /*typed=*/true);
  const std::string train =
      "train --data leaky --model rgcn --epochs 15 --fanouts 10 --hidden 16 --lr 0.02 "
      "--batch-size 64 --no-progress --seed 2 ";
  const CommandResult leaky = run_graphloom(train, dir.path());
  ASSERT_EQ(leaky.exit_code, 0) << leaky.output;
  EXPECT_GT(printed_number(leaky.output, "validation accuracy"), 0.9) << leaky.output;
  const CommandResult timed = run_graphloom(
      train + "--temporal --edge-type-fanout cites=6 --edge-type-fanout follows=6", dir.path());
  ASSERT_EQ(timed.exit_code, 0) << timed.output;
  const double accuracy = printed_number(timed.output, "validation accuracy");
  EXPECT_GE(accuracy, 0) << timed.output;
  EXPECT_LT(accuracy, 0.7) << "the future leaked\n" << timed.output;
}

TEST(CliTemporal, WhatItCannotServeIsRefusedByName) {
  TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 500 --out g", dir.path()).exit_code, 0);
  ASSERT_EQ(run_graphloom("convert --from graphloom g g-link --link-split 0.05,0.1", dir.path())
                .exit_code,
            0);
  for (const char* flags : {"--data g --temporal",  // no node_timestamp
                            "--data g --temporal --sampler labor",
                            "--data g-link --temporal --task link"}) {  // no edge or node times
    const CommandResult result =
        run_graphloom(std::string("train --epochs 1 --no-progress ") + flags, dir.path());
    EXPECT_EQ(result.exit_code, 2) << flags << "\n" << result.output;
    EXPECT_NE(result.output.find("--temporal"), std::string::npos) << flags << "\n"
                                                                   << result.output;
  }
}

}  // namespace
}  // namespace graphloom::testing
