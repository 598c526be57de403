// `graphloom partition` end to end: inspect its output, skewed graphs' phases and balance.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

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
