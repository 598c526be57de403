// The partition table and estimate text: the figures a user reads to judge a partitioning.
#include "graphloom/partition/partition_report.h"

#include <gtest/gtest.h>

namespace graphloom::partition {
namespace {

TEST(PartitionReport, ImbalanceIsLargestOverMean) {
  EXPECT_DOUBLE_EQ(imbalance({10, 10, 10}), 1.0);
  EXPECT_DOUBLE_EQ(imbalance({30, 10}), 1.5);
  EXPECT_DOUBLE_EQ(imbalance({0, 0}), 1.0);  // nothing to balance
  EXPECT_DOUBLE_EQ(imbalance({}), 1.0);
}

TEST(PartitionReport, TableHasARowPerPartWithItsRange) {
  PartitionInfo info;
  info.graph_name = "toy";
  info.num_parts = 2;
  info.num_nodes = 10;
  info.num_edges = 40;
  info.method = "metis";
  info.edge_cut = 4;
  info.node_range_ends = {6, 10};
  info.edges_per_part = {30, 10};
  info.train_per_part = {3, 1};
  const std::string text = describe_partition(info);
  EXPECT_NE(text.find("partition of 'toy': 2 parts by metis"), std::string::npos) << text;
  EXPECT_NE(text.find("edge cut    4 (10.00% of edges)"), std::string::npos) << text;
  EXPECT_NE(text.find("[0, 6)"), std::string::npos) << text;
  EXPECT_NE(text.find("[6, 10)"), std::string::npos) << text;
  EXPECT_NE(text.find("nodes 1.200  edges 1.500  train 1.500"), std::string::npos) << text;
  EXPECT_EQ(text.find("out-edges"), std::string::npos) << text;
}

TEST(PartitionReport, EstimateGivesARangeOnlyWhereMetisHasOne) {
  PartitionEstimate estimate{.peak = 2'000'000'000, .peak_low = 2'000'000'000, .seconds = 30};
  EXPECT_NE(describe_estimate(estimate).find("expected peak memory 2.00 GB ("), std::string::npos);
  estimate.peak_low = 1'000'000'000;
  EXPECT_NE(describe_estimate(estimate).find("1.00-2.00 GB (the high end"), std::string::npos);
}

}  // namespace
}  // namespace graphloom::partition
