// RelationalConv against a hand computation, and split_by_edge_type's views.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/nn/models.h"
#include "graphloom/nn/relational_layers.h"

namespace graphloom::nn {
namespace {

// Destinations 0 and 1 (sources 0..3, the destinations first). Destination 0: sources 1, 2 by
// relation 0 and source 3 by relation 1; destination 1: source 2 by relation 1.
BlockView typed_block() {
  BlockView block;
  block.indptr = torch::tensor({0, 3, 4}, torch::kLong);
  block.indices = torch::tensor({1, 2, 3, 2}, torch::kLong);
  block.edge_types = torch::tensor({0, 0, 1, 1}, torch::kLong);
  block.num_src = 4;
  return block;
}

TEST(RelationalLayers, SplitByEdgeTypeKeepsEachTypesEdgesPerDestination) {
  const std::vector<BlockView> views = split_by_edge_type(typed_block(), 3);
  ASSERT_EQ(views.size(), 3u);
  EXPECT_TRUE(views[0].indptr.equal(torch::tensor({0, 2, 2}, torch::kLong)));
  EXPECT_TRUE(views[0].indices.equal(torch::tensor({1, 2}, torch::kLong)));
  EXPECT_TRUE(views[1].indptr.equal(torch::tensor({0, 1, 2}, torch::kLong)));
  EXPECT_TRUE(views[1].indices.equal(torch::tensor({3, 2}, torch::kLong)));
  EXPECT_EQ(views[2].num_edges(), 0);
  EXPECT_THROW(split_by_edge_type(typed_block(), 1), Error);  // type 1 beyond one relation
  BlockView untyped = typed_block();
  untyped.edge_types = torch::Tensor();
  EXPECT_THROW(split_by_edge_type(untyped, 2), Error);
}

TEST(RelationalLayers, SumIsRgcnAndMeanAveragesTheRelationsThatReachANode) {
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn({4, 3});
  for (const std::string combine : {"sum", "mean"}) {
    RelationalConv conv(3, 2, 2, combine);
    const auto p = conv->named_parameters();
    const torch::Tensor w_self = p["fc_self.weight"];
    const torch::Tensor w0 = p["fc_relation.0.weight"];
    const torch::Tensor w1 = p["fc_relation.1.weight"];
    const torch::Tensor bias = p["bias"];
    const torch::Tensor out = conv->forward(typed_block(), x);
    // Destination 0: both relations reach it; destination 1: only relation 1.
    const torch::Tensor r0 = torch::matmul((x[1] + x[2]) / 2, w0.t());
    const torch::Tensor r1 = torch::matmul(x[3], w1.t());
    const double divide = combine == "sum" ? 1.0 : 2.0;
    const torch::Tensor expected0 = torch::matmul(x[0], w_self.t()) + (r0 + r1) / divide + bias;
    const torch::Tensor expected1 =
        torch::matmul(x[1], w_self.t()) + torch::matmul(x[2], w1.t()) + bias;
    EXPECT_TRUE(torch::allclose(out[0], expected0, 1e-5, 1e-6)) << combine << out[0] << expected0;
    EXPECT_TRUE(torch::allclose(out[1], expected1, 1e-5, 1e-6)) << combine << out[1] << expected1;
  }
}

TEST(RelationalLayers, RelationalModelsNeedEdgeTypes) {
  ModelConfig config{.kind = ModelKind::kRgcn, .in = 3, .hidden = 4, .out = 2, .layers = 2};
  EXPECT_THROW(make_model(config), Error);  // num_relations unknown
  config.num_relations = 2;
  EXPECT_EQ(make_model(config)->num_layers(), 2);
  config.kind = ModelKind::kRsage;
  EXPECT_EQ(make_model(config)->output_dim(1), 2);
}

}  // namespace
}  // namespace graphloom::nn
