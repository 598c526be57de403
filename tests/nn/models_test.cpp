// Layers and models: output shapes, DGL-equivalent formulas on a small block, and that a few
// optimizer steps fit a tiny problem.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/nn/layers.h"
#include "graphloom/nn/models.h"

namespace graphloom::nn {
namespace {

BlockView block() {
  return {torch::tensor({0, 2, 3, 3}, torch::kLong), torch::tensor({1, 3, 0}, torch::kLong), 4};
}

TEST(Layers, OutputShapes) {
  const torch::Tensor x = torch::randn({4, 6});
  for (const char* agg : {"mean", "gcn", "pool"}) {
    EXPECT_EQ(SAGEConv(6, 5, agg)->forward(block(), x).sizes(), torch::IntArrayRef({3, 5})) << agg;
    EXPECT_EQ(SAGEConv(6, 9, agg)->forward(block(), x).sizes(), torch::IntArrayRef({3, 9})) << agg;
  }
  EXPECT_EQ(GraphConv(6, 5)->forward(block(), x).sizes(), torch::IntArrayRef({3, 5}));
  EXPECT_EQ(GATConv(6, 5, 3, true, 0.0)->forward(block(), x).sizes(), torch::IntArrayRef({3, 15}));
  EXPECT_EQ(GATConv(6, 5, 3, false, 0.0)->forward(block(), x).sizes(), torch::IntArrayRef({3, 5}));
  EXPECT_THROW(SAGEConv(6, 5, "median"), Error);
}

TEST(Layers, GraphConvIsSymmetricNormalization) {
  GraphConv conv(2, 2);
  const torch::Tensor x = torch::randn({4, 2});
  // Degrees in the block: dst in-degrees {2, 1, 0 -> 1}; src out-degrees {1, 1, 0 -> 1, 1}.
  const torch::Tensor w = conv->named_parameters()["fc.weight"];
  const torch::Tensor h = x.matmul(w.t());
  torch::Tensor expected = torch::stack({(h[1] + h[3]) / std::sqrt(2.0), h[0], torch::zeros({2})});
  EXPECT_TRUE(torch::allclose(conv->forward(block(), x), expected, 1e-5, 1e-6));
}

TEST(Models, EveryKindFitsATinyProblem) {
  torch::manual_seed(0);
  const BlockView b{torch::tensor({0, 1, 2, 3, 4}, torch::kLong),
                    torch::tensor({1, 0, 3, 2}, torch::kLong), 4};
  std::vector<sampling::Block> blocks(2);
  for (auto& blk : blocks) {
    blk.src_ids = torch::arange(4, torch::kLong);
    blk.num_dst = 4;
    blk.indptr = b.indptr;
    blk.indices = b.indices;
  }
  const torch::Tensor x = torch::randn({4, 8});
  const torch::Tensor y = torch::tensor({0, 1, 2, 1}, torch::kLong);
  for (const char* kind : {"sage", "gcn", "gat", "mlp"}) {
    auto model = make_model({.kind = kind,
                             .in = 8,
                             .hidden = 16,
                             .out = 3,
                             .layers = 2,
                             .dropout = 0.0,
                             .heads = 2,
                             .attention_dropout = 0.0});
    torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(0.05));
    double first = 0;
    double last = 0;
    for (int step = 0; step < 60; ++step) {
      optimizer.zero_grad();
      const torch::Tensor loss = torch::cross_entropy_loss(model->forward(blocks, x), y);
      loss.backward();
      optimizer.step();
      (step == 0 ? first : last) = loss.item<double>();
    }
    EXPECT_LT(last, 0.1 * first) << kind;
  }
  EXPECT_THROW(make_model({.kind = "transformer", .in = 8, .out = 3}), UsageError);
}

}  // namespace
}  // namespace graphloom::nn
