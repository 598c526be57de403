// node_split: disjoint and complete, even counts with force_even, local items first.
#include "graphloom/distributed/graph/node_split.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <set>

#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

// 3 parts of 100 nodes; training nodes deliberately uneven: 90 in part 0, 30 in part 1, 0 in
// part 2.
at::Tensor uneven_nodes() {
  return at::cat({at::arange(0, 90, at::kLong), at::arange(100, 130, at::kLong)});
}

TEST(NodeSplit, ForceEvenGivesEveryTrainerTheSameCountAndCoversAllOnce) {
  const partition::PartitionBook book({100, 200, 300});
  const at::Tensor nodes = uneven_nodes();
  std::multiset<int64_t> seen;
  for (int64_t part = 0; part < 3; ++part) {
    for (int64_t local = 0; local < 2; ++local) {
      const at::Tensor mine = node_split(nodes, book, part, local, 2);
      EXPECT_EQ(mine.numel(), 20) << "part " << part << " trainer " << local;  // 120 / 6
      for (int64_t i = 0; i < mine.numel(); ++i) seen.insert(mine[i].item<int64_t>());
    }
  }
  EXPECT_EQ(seen.size(), 120u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 120u);
  // Part 1 owns 30 training nodes and has a quota of 40: it keeps all 30 of its own.
  const at::Tensor part1 =
      at::cat({node_split(nodes, book, 1, 0, 2), node_split(nodes, book, 1, 1, 2)});
  EXPECT_EQ(((part1 >= 100) & (part1 < 200)).sum().item<int64_t>(), 30);
}

TEST(NodeSplit, WithoutForceEvenEachPartTakesWhatItOwns) {
  const partition::PartitionBook book({100, 200, 300});
  const at::Tensor nodes = uneven_nodes();
  EXPECT_EQ(node_split(nodes, book, 0, 0, 1, {.force_even = false}).numel(), 90);
  EXPECT_EQ(node_split(nodes, book, 1, 0, 1, {.force_even = false}).numel(), 30);
  EXPECT_EQ(node_split(nodes, book, 2, 0, 1, {.force_even = false}).numel(), 0);  // Join covers it
}

TEST(NodeSplit, BadArgumentsAreClearErrors) {
  const partition::PartitionBook book({10, 20});
  const at::Tensor nodes = at::arange(20, at::kLong);
  EXPECT_NE(testing::error_of([&] { node_split(nodes, book, 2, 0, 1); }).find("part 2"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { node_split(nodes, book, 0, 3, 2); }).find("local rank 3"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { node_split(at::tensor({25}, at::kLong), book, 0, 0, 1); }), "");
}

}  // namespace
}  // namespace graphloom::distributed
