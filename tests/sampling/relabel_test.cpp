// Relabeling: destinations first, new neighbors in order of first appearance, every pick
// mapped back, and a table left clean after an error.
#include "graphloom/sampling/relabel.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "graphloom/base/error.h"

namespace graphloom::sampling {
namespace {

// The reference: the picks that are not destinations, each at its first appearance, after the
// destinations.
at::Tensor expected_sources(const at::Tensor& dst, const at::Tensor& picks) {
  std::vector<int64_t> all(dst.data_ptr<int64_t>(), dst.data_ptr<int64_t>() + dst.numel());
  std::set<int64_t> known(all.begin(), all.end());
  for (int64_t j = 0; j < picks.numel(); ++j) {
    const int64_t v = picks.data_ptr<int64_t>()[j];
    if (known.insert(v).second) all.push_back(v);
  }
  return at::tensor(all, at::kLong);
}

void expect_relabeled(const at::Tensor& dst, const at::Tensor& picks, const Relabeled& result) {
  EXPECT_TRUE(at::equal(result.src_ids, expected_sources(dst, picks)));
  EXPECT_TRUE(at::equal(result.src_ids.index_select(0, result.indices), picks));
}

void expect_clean(const RelabelWorkspace& workspace) {
  EXPECT_TRUE(workspace.table.eq(-1).all().item<bool>());
}

struct Case {
  const char* name;
  int64_t num_nodes;
  int64_t num_dst;
  int64_t num_picks;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RelabelTest : public ::testing::TestWithParam<Case> {};

TEST_P(RelabelTest, MatchesTheReferenceAndLeavesTheTableClean) {
  const Case c = GetParam();
  at::manual_seed(11);
  const at::Tensor dst = at::randperm(c.num_nodes, at::kLong).slice(0, 0, c.num_dst).contiguous();
  // Picks mix destinations and other nodes, with repeats.
  const at::Tensor picks = at::randint(c.num_nodes, {c.num_picks}, at::kLong);
  RelabelWorkspace workspace(c.num_nodes);
  for (int run = 0; run < 2; ++run) {  // the second run reuses the table
    expect_relabeled(dst, picks, relabel(dst, picks, workspace));
    expect_clean(workspace);
  }
  // The device path (sorting, in tensor ops) numbers the sources exactly as the table does.
  const Relabeled by_table = relabel(dst, picks, workspace);
  const Relabeled by_sorting = relabel_with_tensor_ops(dst, picks);
  EXPECT_TRUE(at::equal(by_table.src_ids, by_sorting.src_ids));
  EXPECT_TRUE(at::equal(by_table.indices, by_sorting.indices));
}

INSTANTIATE_TEST_SUITE_P(Shapes, RelabelTest,
                         ::testing::Values(Case{"ManyRepeats", 1000, 10, 50000},
                                           Case{"FewPicksOnABigGraph", 1 << 22, 50, 3000},
                                           Case{"ManyDestinations", 100000, 5000, 60000},
                                           Case{"EveryNodeADestination", 64, 64, 1000},
                                           Case{"NoPicks", 500, 3, 0}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Relabel, RepeatedDestinationThrowsNamingItAndLeavesTheWorkspaceClean) {
  RelabelWorkspace workspace(100);
  const at::Tensor dst = at::tensor({4, 9, 4}, at::kLong);
  const at::Tensor picks = at::tensor({1, 2, 9, 50}, at::kLong);
  try {
    relabel(dst, picks, workspace);
    FAIL() << "expected graphloom::Error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("duplicate seed node 4"), std::string::npos)
        << error.what();
  }
  expect_clean(workspace);
  try {
    relabel_with_tensor_ops(at::tensor({7, 4, 9, 4}, at::kLong), picks);
    FAIL() << "expected graphloom::Error from the tensor-op relabeling";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("duplicate seed node 4"), std::string::npos)
        << error.what();
  }
  const at::Tensor good = at::tensor({4, 9}, at::kLong);
  expect_relabeled(good, picks, relabel(good, picks, workspace));
}

}  // namespace
}  // namespace graphloom::sampling
