// Temporal link prediction: each pair's time (its own, or its positive's for a negative, or a
// refusal naming the split), evaluation batches that never reach an edge of the pair's time or
// later, and training end to end on a planted graph whose edges carry times.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/temporal.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/train/link_prediction.h"
#include "link_fixtures.h"
#include "support/test_support.h"
#include "temporal_link.h"  // internal to the train module

namespace graphloom::train {
namespace {

TEST(TemporalLink, PairsAreSampledOneBeforeTheirTime) {
  constexpr int64_t kEarliest = std::numeric_limits<int64_t>::min();
  const at::Tensor before =
      sampled_before(at::tensor({int64_t{5}, int64_t{0}, kEarliest}, at::kLong));
  EXPECT_TRUE(at::equal(
      before, at::tensor({int64_t{4}, int64_t{-1}, kEarliest}, at::kLong)));  // no wrap-around
}

TEST(TemporalLink, ASplitsTimesAreItsOwnOrThoseOfTheOnePositiveEachNegativeWasDrawnFor) {
  TrainingInputs inputs;
  inputs.name = "toy";
  inputs.edge_splits = {{"valid", at::zeros({3, 2}, at::kLong)},
                        {"valid_neg", at::ones({3, 2}, at::kLong)},
                        {"test", at::zeros({2, 2}, at::kLong)},
                        {"test_neg", at::ones({4, 2}, at::kLong)}};
  inputs.edge_split_times = {{"valid", at::tensor({10, 20, 30}, at::kLong)},
                             {"test", at::tensor({40, 50}, at::kLong)}};
  EXPECT_TRUE(at::equal(split_times(inputs, "valid"), inputs.edge_split_times.at("valid")));
  EXPECT_TRUE(at::equal(split_times(inputs, "valid_neg"), inputs.edge_split_times.at("valid")));
  // Two negatives per positive: whose time each one takes is not known.
  std::string message = testing::error_of([&] { split_times(inputs, "test_neg"); });
  EXPECT_NE(message.find("'test_neg'"), std::string::npos) << message;
  EXPECT_NE(message.find("one negative per timed positive"), std::string::npos) << message;
  inputs.edge_split_times["test_neg"] = at::tensor({1, 2, 3, 4}, at::kLong);
  EXPECT_TRUE(at::equal(split_times(inputs, "test_neg"), inputs.edge_split_times.at("test_neg")));
  inputs.edge_split_times["test"] = at::tensor({1}, at::kLong);  // one time for two pairs
  message = testing::error_of([&] { split_times(inputs, "test"); });
  EXPECT_NE(message.find("1 times for the 2 pairs of edge split 'test'"), std::string::npos)
      << message;
}

// Evaluation runs the timed pair stage over the pairs in order: every score lands on its
// pair's row, and no sampled edge of any hop is as late as the pair's time.
TEST(TemporalLink, EvaluationScoresEachPairFromEdgesBeforeItsTimeOnly) {
  at::manual_seed(5);
  constexpr int64_t kNodes = 300;
  graph::CooInput input{.src = at::randint(kNodes, {6000}, at::kLong),
                        .dst = at::randint(kNodes, {6000}, at::kLong),
                        .num_nodes = kNodes};
  const at::Tensor edge_time = at::randint(1000, {6000}, at::kLong);
  input.edge_time = edge_time;
  input.keep_edge_ids = true;  // edge ids: COO positions
  const graph::CscGraph graph = graph::csc_from_coo(input);
  const sampling::LocalNeighborSource source(
      graph::sorted_by_time(graph, at::Tensor(), graph.edge_time));
  const sampling::NeighborSampler sampler(&source, {.fanouts = {5, 5}, .seed = 3});
  const at::Tensor pairs = at::randint(kNodes, {250, 2}, at::kLong);
  const at::Tensor times = at::randint(1000, {250}, at::kLong);
  const auto* edge_time_of = edge_time.data_ptr<int64_t>();
  int64_t batches = 0;
  const at::Tensor scores = scores_at_pair_times(
      pairs, times, {.sampler = &sampler, .batch_size = 64}, [&](const sampling::MiniBatch& batch) {
        ++batches;
        const sampling::PairBatch& p = batch.pairs;
        EXPECT_TRUE(at::equal(p.time, times.index_select(0, p.input_id) - 1));
        for (const sampling::Block& block : batch.blocks) {
          const auto* dst_time = block.src_times.data_ptr<int64_t>();
          const auto* indptr = block.indptr.data_ptr<int64_t>();
          const auto* ids = block.edge_ids.data_ptr<int64_t>();
          for (int64_t d = 0; d < block.num_dst; ++d) {
            for (int64_t e = indptr[d]; e < indptr[d + 1]; ++e) {
              EXPECT_LE(edge_time_of[ids[e]], dst_time[d]);
            }
          }
        }
        return p.src.to(at::kFloat) * 1000 + p.dst.to(at::kFloat);
      });
  EXPECT_EQ(batches, 4);
  EXPECT_TRUE(at::equal(
      scores, pairs.select(1, 0).to(at::kFloat) * 1000 + pairs.select(1, 1).to(at::kFloat)));
}

// A time per undirected pair, the same both ways: an edge of the planted graph and its split
// pair carry one time.
at::Tensor time_of_pair(const at::Tensor& u, const at::Tensor& v) {
  return (at::minimum(u, v) * 7919 + at::maximum(u, v) * 104729) % 1000;
}

io::Dataset timed_planted() {
  io::Dataset data = link_fixtures::split_planted();
  data.graph.edge_time =
      time_of_pair(data.graph.indices.to(at::kLong), data.graph.destinations().to(at::kLong));
  for (const char* name : {"train", "valid", "test"}) {
    const at::Tensor& pairs = data.edge_splits.at(name);
    data.edge_split_times[name] = time_of_pair(pairs.select(1, 0), pairs.select(1, 1));
  }
  return data;
}

TrainOptions temporal_link_options() {
  TrainOptions options = link_fixtures::quick_link_options();
  options.epochs = 6;
  options.temporal = true;
  return options;
}

TEST(TemporalLink, TrainsAndEvaluatesEachPairFromItsPast) {
  const io::Dataset data = timed_planted();
  const LinkResult result = train_link_prediction(data, temporal_link_options(), {});
  EXPECT_GT(result.test_auc, 0.7);
  EXPECT_GT(result.best_val_auc, 0.7);
  EXPECT_GT(result.times.sample, 0.0);
}

TEST(TemporalLink, WhatItCannotSampleIsRefusedByName) {
  io::Dataset data = timed_planted();
  TrainOptions options = temporal_link_options();
  options.model.kind = nn::ModelKind::kLightGcn;
  options.fanouts = {-1, -1};
  std::string message = testing::error_of([&] { train_link_prediction(data, options, {}); });
  EXPECT_NE(message.find("LightGCN samples nothing"), std::string::npos) << message;

  data.edge_split_times.erase("valid");
  message = testing::error_of([&] { train_link_prediction(data, temporal_link_options(), {}); });
  EXPECT_NE(message.find("no times for its 'valid' pairs"), std::string::npos) << message;

  data = timed_planted();
  data.graph.edge_time = at::Tensor();
  message = testing::error_of([&] { train_link_prediction(data, temporal_link_options(), {}); });
  EXPECT_NE(message.find("has no edge_timestamp"), std::string::npos) << message;
  data.node_timestamp = at::zeros({data.num_nodes()}, at::kLong);  // node times are not enough
  message = testing::error_of([&] { train_link_prediction(data, temporal_link_options(), {}); });
  EXPECT_NE(message.find("has no edge_timestamp"), std::string::npos) << message;
}

}  // namespace
}  // namespace graphloom::train
