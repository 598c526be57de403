// Relabeling: destinations first, new neighbors in ascending order, every pick mapped back, the
// same result on either path (bitmap scan or sort) and with any thread count, and a workspace
// left clean after an error.
#include "graphloom/sampling/relabel.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <set>

#include "graphloom/base/error.h"

namespace graphloom::sampling {
namespace {

// The reference: the unique picks that are not destinations, sorted, after the destinations.
at::Tensor expected_sources(const at::Tensor& dst, const at::Tensor& picks) {
  const std::set<int64_t> destinations(dst.data_ptr<int64_t>(),
                                       dst.data_ptr<int64_t>() + dst.numel());
  std::set<int64_t> fresh;
  for (int64_t j = 0; j < picks.numel(); ++j) {
    const int64_t v = picks.data_ptr<int64_t>()[j];
    if (destinations.count(v) == 0) fresh.insert(v);
  }
  std::vector<int64_t> all(dst.data_ptr<int64_t>(), dst.data_ptr<int64_t>() + dst.numel());
  all.insert(all.end(), fresh.begin(), fresh.end());
  return at::tensor(all, at::kLong);
}

void expect_relabeled(const at::Tensor& dst, const at::Tensor& picks, const Relabeled& result) {
  EXPECT_TRUE(at::equal(result.src_ids, expected_sources(dst, picks)));
  EXPECT_TRUE(at::equal(result.src_ids.index_select(0, result.indices), picks));
}

void expect_clean(const RelabelWorkspace& workspace) {
  EXPECT_TRUE(std::all_of(workspace.local_id.begin(), workspace.local_id.end(),
                          [](int32_t id) { return id == -1; }));
  for (const auto& bitmap : workspace.seen) {
    EXPECT_TRUE(std::all_of(bitmap.begin(), bitmap.end(), [](uint64_t w) { return w == 0; }));
  }
}

struct Case {
  const char* name;
  int64_t num_nodes;
  int64_t num_dst;
  int64_t num_picks;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RelabelTest : public ::testing::TestWithParam<Case> {};

TEST_P(RelabelTest, MatchesTheReferenceWithOneAndTwoThreads) {
  const Case c = GetParam();
  at::manual_seed(11);
  const at::Tensor dst = at::randperm(c.num_nodes, at::kLong).slice(0, 0, c.num_dst).contiguous();
  // Picks mix destinations and other nodes, with repeats.
  const at::Tensor picks = at::randint(c.num_nodes, {c.num_picks}, at::kLong);
  RelabelWorkspace workspace(c.num_nodes);
  const int threads = omp_get_max_threads();
  std::vector<at::Tensor> sources;
  for (const int t : {1, 2}) {
    omp_set_num_threads(t);
    const Relabeled result = relabel(dst, picks, workspace);
    expect_relabeled(dst, picks, result);
    expect_clean(workspace);
    sources.push_back(result.src_ids);
  }
  omp_set_num_threads(threads);
  EXPECT_TRUE(at::equal(sources[0], sources[1]));
}

INSTANTIATE_TEST_SUITE_P(BothPaths, RelabelTest,
                         ::testing::Values(
                             // bitmap scan, parallel passes
                             Case{"Dense", 1000, 10, 50000},
                             // a few picks on a big graph: collected and sorted
                             Case{"Sparse", 1 << 22, 50, 3000},
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
  const at::Tensor good = at::tensor({4, 9}, at::kLong);
  expect_relabeled(good, picks, relabel(good, picks, workspace));
}

}  // namespace
}  // namespace graphloom::sampling
