// Link targets and full ranking on a typed graph, against hand-computed values.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"
#include "graphloom/train/link_ranking.h"

namespace graphloom::train {
namespace {

// Users 0-1, items 2-4. User 0 trained on item 2, validated on item 3, tested on item 4;
// user 1 (cold: no training pair) is tested on item 2.
io::Dataset tiny_typed_dataset() {
  io::Dataset data;
  graph::CooInput input;
  input.src = torch::tensor({0, 2}, torch::kLong);
  input.dst = torch::tensor({2, 0}, torch::kLong);
  input.edge_types = torch::tensor({0, 1}, torch::kChar);
  input.num_nodes = 5;
  data.graph = graph::csc_from_coo(input);
  data.graph.node_type_offset = torch::tensor({0, 2, 5}, torch::kLong);
  data.schema.node_types = {"user", "item"};
  data.schema.edge_types = {{"user", "buys", "item"}, {"item", "bought_by", "user"}};
  data.edge_splits["train"] = torch::tensor({{0, 2}}, torch::kLong);
  data.edge_splits["valid"] = torch::tensor({{0, 3}}, torch::kLong);
  data.edge_splits["test"] = torch::tensor({{0, 4}, {1, 2}}, torch::kLong);
  data.edge_splits["test_neg"] = torch::tensor({{1, 3}}, torch::kLong);
  return data;
}

TEST(LinkRanking, TypedTargetRanksOnlyItemsAndSeparatesColdQueries) {
  const io::Dataset data = tiny_typed_dataset();
  const LinkTarget target = link_target(data);
  EXPECT_TRUE(target.candidates.equal(torch::tensor({2, 3, 4}, torch::kLong)));
  EXPECT_FALSE(target.symmetric);
  // User 1 scores items 2, 3, 4 as 0, 1, 0.5: its test item comes third.
  const torch::Tensor embeddings =
      torch::tensor({{0.0f, 0.0f}, {1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 0.0f}, {0.5f, 0.0f}});
  const PairScorer dot = [](const at::Tensor& u, const at::Tensor& v, const at::Tensor&) {
    return (u * v).sum(1);
  };
  const FullRanking ranking = full_ranking(dot, embeddings, data.edge_splits, target);
  EXPECT_EQ(ranking.all.queries, 2);
  EXPECT_DOUBLE_EQ(ranking.all.recall_at_20, 1.0);  // three candidates, K = 20
  // User 0: items 2 and 3 excluded, item 4 first (AP 1); user 1: AP 1/3.
  EXPECT_NEAR(ranking.all.map_at_10, (1.0 + 1.0 / 3.0) / 2.0, 1e-9);
  EXPECT_EQ(ranking.warm.queries, 1);
  EXPECT_DOUBLE_EQ(ranking.warm.map_at_10, 1.0);
  // Popularity: item 2 has the only training pair, so user 1 finds it first.
  EXPECT_DOUBLE_EQ(ranking.all.popularity_map_at_10, 1.0);
}

// Users 0-2, items 3-5. Training pairs (0,3) weighted 1, (2,4) and (0,4) weighted 0.1: item 4
// is the most rated, item 3 the most weighted. Cold user 1 is tested on item 3, user 0 on 5.
TEST(LinkRanking, WeightedPopularityRanksByTheTrainingPairsSummedWeights) {
  io::Dataset data;
  graph::CooInput input;
  input.src = torch::tensor({0, 2, 0, 3, 4, 4}, torch::kLong);
  input.dst = torch::tensor({3, 4, 4, 0, 2, 0}, torch::kLong);
  input.edge_types = torch::tensor({0, 0, 0, 1, 1, 1}, torch::kChar);
  input.num_nodes = 6;
  data.graph = graph::csc_from_coo(input);
  data.graph.node_type_offset = torch::tensor({0, 3, 6}, torch::kLong);
  data.schema.node_types = {"user", "item"};
  data.schema.edge_types = {{"user", "buys", "item"}, {"item", "bought_by", "user"}};
  data.edge_splits["train"] = torch::tensor({{0, 3}, {2, 4}, {0, 4}}, torch::kLong);
  data.edge_splits["valid"] = torch::tensor({{2, 5}}, torch::kLong);
  data.edge_splits["test"] = torch::tensor({{1, 3}, {0, 5}}, torch::kLong);
  const PairScorer zero = [](const at::Tensor& u, const at::Tensor&, const at::Tensor&) {
    return torch::zeros({u.size(0)});
  };
  const torch::Tensor embeddings = torch::zeros({6, 2});
  const torch::Tensor weights = torch::tensor({1.0, 0.1, 0.1});
  const FullRanking ranking =
      full_ranking(zero, embeddings, data.edge_splits, link_target(data), weights);
  // By count user 1 ranks item 4 before item 3 (AP 1/2); by weight item 3 first (AP 1). User 0
  // has only item 5 left either way (AP 1).
  EXPECT_DOUBLE_EQ(ranking.all.popularity_map_at_10, (0.5 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(ranking.all.weighted_popularity_map_at_10, 1.0);
  // Without weights there is no weighted figure; with the wrong count, an error.
  EXPECT_EQ(full_ranking(zero, embeddings, data.edge_splits, link_target(data))
                .all.weighted_popularity_map_at_10,
            -1);
  EXPECT_THROW(
      full_ranking(zero, embeddings, data.edge_splits, link_target(data), torch::ones({2})), Error);
}

TEST(LinkRanking, SplitsMixingNodeTypesAreRefused) {
  io::Dataset data = tiny_typed_dataset();
  data.edge_splits["valid"] = torch::tensor({{0, 3}, {2, 3}}, torch::kLong);  // item -> item
  try {
    link_target(data);
    FAIL() << "mixed pair types accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("edge split 'valid' mixes node types"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace graphloom::train
