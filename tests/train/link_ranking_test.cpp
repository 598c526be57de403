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
