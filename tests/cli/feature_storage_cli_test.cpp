// `train --feature-storage`: the run is the same whether 'feat' is read into memory, mapped, or
// read from its file on each gather (with or without a cache of hot rows in front): the same
// rows reach the model, so the accuracies agree to the last printed digit. What cannot work is
// refused by name.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <utility>

#include "support/test_support.h"

namespace graphloom::testing {
namespace {

std::string accuracies(const std::string& output) {
  std::smatch match;
  if (!std::regex_search(output, match,
                         std::regex("validation accuracy [0-9.]+\\s+test accuracy [0-9.]+"))) {
    return "(none in: " + output + ")";
  }
  return match[0];
}

TEST(CliFeatureStorage, DiskAndMmapTrainTheRunThatMemoryTrains) {
  TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 3000 --out g", dir.path()).exit_code, 0);
  const std::string train =
      "train --data g --epochs 3 --fanouts 5,5 --hidden 32 --no-progress --seed 3 ";
  const CommandResult memory = run_graphloom(train + "--feature-storage memory", dir.path());
  ASSERT_EQ(memory.exit_code, 0) << memory.output;
  const std::string expected = accuracies(memory.output);
  for (const std::string storage : {"mmap", "disk", "disk --cache-policy sieve --cache-size 64K",
                                    "disk --cache-policy s3-fifo --cache-size 64K",
                                    "disk --cache-policy degree --cache-size 64K"}) {
    const CommandResult result = run_graphloom(train + "--feature-storage " + storage, dir.path());
    ASSERT_EQ(result.exit_code, 0) << storage << "\n" << result.output;
    EXPECT_EQ(accuracies(result.output), expected) << storage << "\n" << result.output;
    if (storage.rfind("disk", 0) == 0) {
      EXPECT_NE(result.output.find("'feat' read from"), std::string::npos) << result.output;
      EXPECT_NE(result.output.find(" disk "), std::string::npos) << result.output;  // MB per epoch
    }
    if (storage.find("cache") != std::string::npos) {
      EXPECT_NE(result.output.find("cache hits"), std::string::npos) << result.output;
    }
  }
}

TEST(CliFeatureStorage, WhatCannotWorkIsRefusedByName) {
  TempDir dir;
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 500 --out g", dir.path()).exit_code, 0);
  const std::pair<const char*, const char*> cases[] = {
      {"--feature-storage disk", "--feature-storage"},  // the embedded dataset has no file
      {"--data g --feature-storage disk --normalize-features row", "--feature-storage"},
      {"--data g --cache-policy sieve --cache-size 1M", "--cache-policy"},  // a cache of what?
      {"--data g --feature-storage disk --cache-policy sieve", "--cache-policy"}};
  for (const auto& [flags, named] : cases) {
    const CommandResult result =
        run_graphloom(std::string("train --epochs 1 --no-progress ") + flags, dir.path());
    EXPECT_EQ(result.exit_code, 2) << flags << "\n" << result.output;
    EXPECT_NE(result.output.find(named), std::string::npos) << flags << "\n" << result.output;
  }
}

}  // namespace
}  // namespace graphloom::testing
