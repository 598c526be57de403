// The sampling front's limits: fanouts with replacement are bounded, and a call's picks are
// counted with overflow-checked sums against SampleOptions::max_picks before any output is
// allocated, so that no fanout, seed list or duplicate hub can wrap an offset or exhaust memory.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "graphloom/base/error.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

using testing::star_graph;

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

// The LimitError a call throws (or fails the test); its field names the limit.
template <typename Call>
LimitError limit_error_of(Call&& call) {
  try {
    call();
  } catch (const LimitError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a LimitError, got: " << e.what();
    return LimitError("", "");
  }
  ADD_FAILURE() << "expected a LimitError, got none";
  return LimitError("", "");
}

TEST(SamplingLimits, FanoutsWithReplacementAtTheInt64EdgesAreRefusedByName) {
  const LocalNeighborSource source(star_graph(20));
  const at::Tensor seeds = at::zeros({4}, at::kLong);
  // 4 x 2^62 wraps to 0 and 4 x (2^62 + 1) to 4: both once overran a buffer.
  for (const int64_t fanout : {int64_t{1} << 62, (int64_t{1} << 62) + 1, kMaxInt64,
                               kMaxReplacementFanout + 1, int64_t{1000000000}}) {
    const LimitError error =
        limit_error_of([&] { source.sample_neighbors(seeds, fanout, {.replace = true}); });
    EXPECT_EQ(error.field(), "fanout") << fanout;
    EXPECT_NE(std::string(error.what()).find(std::to_string(kMaxReplacementFanout)),
              std::string::npos)
        << error.what();
  }
  // The bound itself is allowed (exactly that many picks).
  const SampledEdges edges =
      source.sample_neighbors(at::zeros({1}, at::kLong), kMaxReplacementFanout, {.replace = true});
  EXPECT_EQ(edges.neighbors.numel(), kMaxReplacementFanout);
}

TEST(SamplingLimits, HugeFanoutsWithoutReplacementTakeTheDegree) {
  const LocalNeighborSource source(star_graph(20));
  for (const int64_t fanout : {int64_t{1} << 62, kMaxInt64}) {
    const SampledEdges edges = source.sample_neighbors(at::zeros({3}, at::kLong), fanout, {});
    EXPECT_EQ(edges.neighbors.numel(), 60);
  }
}

TEST(SamplingLimits, TheCallsPicksAreCheckedAgainstMaxPicksBeforeAllocating) {
  const LocalNeighborSource source(star_graph(20));
  const at::Tensor seeds = at::zeros({4}, at::kLong);
  EXPECT_EQ(
      source.sample_neighbors(seeds, 10, {.replace = true, .max_picks = 40}).neighbors.numel(), 40);
  LimitError error = limit_error_of(
      [&] { source.sample_neighbors(seeds, 10, {.replace = true, .max_picks = 39}); });
  EXPECT_EQ(error.field(), "max_picks");
  EXPECT_NE(std::string(error.what()).find("(39) is below the picks of 4 seeds"), std::string::npos)
      << error.what();
  // All neighbors of a hub repeated: the degree sums, not the fanout, pass the limit.
  const at::Tensor hubs = at::zeros({1000}, at::kLong);
  error = limit_error_of([&] { source.sample_neighbors(hubs, -1, {.max_picks = 19999}); });
  EXPECT_EQ(error.field(), "max_picks");
  EXPECT_EQ(source.sample_neighbors(hubs, -1, {.max_picks = 20000}).neighbors.numel(), 20000);
  // Millions of seeds at the largest fanout with replacement: the sum passes any budget long
  // before int64; it is refused, not allocated.
  const at::Tensor many = at::zeros({1 << 22}, at::kLong);
  error = limit_error_of(
      [&] { source.sample_neighbors(many, kMaxReplacementFanout, {.replace = true}); });
  EXPECT_EQ(error.field(), "max_picks");
  EXPECT_NE(std::string(error.what()).find(std::to_string(kDefaultMaxPicks)), std::string::npos)
      << error.what();
}

TEST(SamplingLimits, TypedFanoutsAreBoundedAndBudgetedLikeTheOthers) {
  graph::CscGraph typed = star_graph(20);
  typed.type_per_edge = at::zeros({20}, at::kChar);
  const LocalNeighborSource source(typed);
  const at::Tensor seeds = at::zeros({4}, at::kLong);
  const LimitError bound = limit_error_of([&] {
    source.sample_neighbors(seeds, 1, {.replace = true, .edge_type_fanouts = {int64_t{1} << 62}});
  });
  EXPECT_EQ(bound.field(), "edge_type_fanouts");
  const LimitError budget = limit_error_of([&] {
    source.sample_neighbors(seeds, 1,
                            {.replace = true, .edge_type_fanouts = {50}, .max_picks = 199});
  });
  EXPECT_EQ(budget.field(), "max_picks");
  EXPECT_EQ(source.sample_neighbors(seeds, 1, {.replace = true, .edge_type_fanouts = {50}})
                .neighbors.numel(),
            200);
}

TEST(SamplingLimits, BadLimitsAndTheMultiLayerFrontAreOptionErrors) {
  const LocalNeighborSource source(star_graph(20));
  EXPECT_THROW(source.sample_neighbors(at::zeros({1}, at::kLong), 5, {.max_picks = -1}),
               OptionError);
  EXPECT_THROW(source.sample_neighbors(at::zeros({1}, at::kLong), -2, {}), OptionError);
  EXPECT_THROW(NeighborSampler(&source, {.fanouts = {5, int64_t{1} << 40}, .replace = true}),
               LimitError);
}

}  // namespace
}  // namespace graphloom::sampling
