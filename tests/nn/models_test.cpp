// Layers and models: output shapes, DGL-equivalent formulas on a small block, and that a few
// optimizer steps fit a tiny problem.
#include <ATen/autocast_mode.h>
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
  for (const ModelKind kind :
       {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat, ModelKind::kMlp}) {
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
    EXPECT_LT(last, 0.1 * first) << name_of(kind);
  }
  // An unknown name is refused where text becomes a kind; lightgcn is built by the link task.
  EXPECT_THROW(enum_from_name<ModelKind>("model.kind", "transformer"), OptionError);
  EXPECT_THROW(make_model({.kind = ModelKind::kLightGcn, .in = 8, .out = 3}), OptionError);
}

// Two blocks over 6 nodes: what the checkpoint and precision tests run a model on.
std::vector<sampling::Block> two_blocks() {
  std::vector<sampling::Block> blocks(2);
  for (auto& blk : blocks) {
    blk.src_ids = torch::arange(6, torch::kLong);
    blk.num_dst = 6;
    blk.indptr = torch::tensor({0, 2, 3, 5, 6, 8, 9}, torch::kLong);
    blk.indices = torch::tensor({1, 2, 0, 3, 4, 5, 0, 1, 2}, torch::kLong);
  }
  return blocks;
}

TEST(Models, CheckpointedLayersGiveTheSameGradientsWithDropout) {
  const auto blocks = two_blocks();
  const torch::Tensor x = torch::randn({6, 5});
  for (const ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    torch::manual_seed(3);
    const ModelConfig config{.kind = kind,
                             .in = 5,
                             .hidden = 8,
                             .out = 3,
                             .layers = 2,
                             .dropout = 0.5,
                             .heads = 2,
                             .attention_dropout = 0.3};
    auto plain = make_model(config);
    ModelConfig checkpointed_config = config;
    checkpointed_config.checkpoint_layers = true;
    auto checkpointed = make_model(checkpointed_config);
    {  // identical parameters
      torch::NoGradGuard no_grad;
      const auto from = plain->parameters();
      const auto to = checkpointed->parameters();
      for (std::size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
    }
    std::vector<torch::Tensor> grads[2];
    torch::Tensor outputs[2];
    int index = 0;
    for (auto* model : {plain.get(), checkpointed.get()}) {
      torch::manual_seed(11);  // the same dropout masks in both runs
      const torch::Tensor input = x.clone().requires_grad_(true);
      outputs[index] = model->forward(blocks, input);
      outputs[index].pow(2).sum().backward();
      for (const auto& p : model->parameters()) grads[index].push_back(p.grad().clone());
      grads[index].push_back(input.grad().clone());
      ++index;
    }
    EXPECT_TRUE(torch::allclose(outputs[0], outputs[1])) << name_of(kind);
    EXPECT_EQ(outputs[1].grad_fn()->name(), "CheckpointBackward") << name_of(kind);
    ASSERT_EQ(grads[0].size(), grads[1].size());
    for (std::size_t i = 0; i < grads[0].size(); ++i) {
      EXPECT_TRUE(torch::allclose(grads[0][i], grads[1][i], 1e-5, 1e-6))
          << name_of(kind) << " grad " << i;
    }
  }
}

// Input nodes {3, 7, 1, 9, 0, 5} of a 10-node graph, then the first three, then two seeds.
std::vector<sampling::Block> sampled_blocks() {
  std::vector<sampling::Block> blocks(2);
  blocks[0].src_ids = torch::tensor({3, 7, 1, 9, 0, 5}, torch::kLong);
  blocks[0].num_dst = 3;
  blocks[0].indptr = torch::tensor({0, 2, 4, 6}, torch::kLong);
  blocks[0].indices = torch::tensor({1, 3, 0, 4, 5, 2}, torch::kLong);
  blocks[1].src_ids = torch::tensor({3, 7, 1}, torch::kLong);
  blocks[1].num_dst = 2;
  blocks[1].indptr = torch::tensor({0, 2, 3}, torch::kLong);
  blocks[1].indices = torch::tensor({1, 2, 0}, torch::kLong);
  return blocks;
}

TEST(Models, ReadingTheFeatureTableInPlaceEqualsGatheredInputRows) {
  const auto blocks = sampled_blocks();
  const torch::Tensor table = torch::randn({10, 5});
  const torch::Tensor ids = blocks[0].src_ids;
  struct Case {
    ModelConfig config;
    bool in_place;  // reads_input_table(): no gathered copy
  };
  const std::vector<Case> cases = {
      {{.kind = ModelKind::kSage, .aggregator = "mean"}, true},
      {{.kind = ModelKind::kSage, .aggregator = "gcn"}, true},
      {{.kind = ModelKind::kSage, .aggregator = "pool"}, false},
      {{.kind = ModelKind::kSage, .input_dropout = 0.2},
       false},                                           // dropout of the table: gathers first
      {{.kind = ModelKind::kSage, .hidden = 3}, false},  // in > out: projects before aggregating
      {{.kind = ModelKind::kMlp}, true},
      {{.kind = ModelKind::kGcn}, false},
      {{.kind = ModelKind::kGat, .heads = 2}, false}};
  for (const Case& c : cases) {
    ModelConfig config = c.config;
    config.in = 5;
    config.hidden = c.config.hidden == 256 ? 8 : c.config.hidden;
    config.out = 3;
    config.layers = 2;
    config.dropout = 0.5;
    const std::string name = std::string(name_of(config.kind)) + "/" + config.aggregator;
    torch::manual_seed(1);
    auto model = make_model(config);
    EXPECT_EQ(model->reads_input_table(), c.in_place) << name;
    torch::Tensor outputs[2];
    std::vector<torch::Tensor> grads[2];
    for (int in_place = 0; in_place < 2; ++in_place) {
      model->zero_grad();
      torch::manual_seed(7);  // the same dropout masks
      outputs[in_place] = in_place ? model->forward(blocks, table, ids)
                                   : model->forward(blocks, table.index_select(0, ids));
      outputs[in_place].pow(2).sum().backward();
      for (const auto& p : model->parameters()) grads[in_place].push_back(p.grad().clone());
    }
    EXPECT_TRUE(torch::allclose(outputs[0], outputs[1], 1e-5, 1e-6)) << name;
    for (std::size_t i = 0; i < grads[0].size(); ++i) {
      EXPECT_TRUE(torch::allclose(grads[0][i], grads[1][i], 1e-5, 1e-6)) << name << " grad " << i;
    }
  }
}

TEST(Models, Bfloat16AutocastRunsDenseLayersInBfloat16AndStaysClose) {
  const auto blocks = two_blocks();
  const torch::Tensor x = torch::randn({6, 16});
  for (const ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    torch::manual_seed(1);
    auto model = make_model({.kind = kind,
                             .in = 16,
                             .hidden = 32,
                             .out = 4,
                             .layers = 2,
                             .dropout = 0.0,
                             .heads = 2,
                             .attention_dropout = 0.0});
    const torch::Tensor reference = model->forward(blocks, x);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, true);
    const torch::Tensor low = model->forward(blocks, x);
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
    // bfloat16 keeps 8 bits of mantissa: outputs within a few percent of their scale.
    EXPECT_FALSE(torch::equal(full_precision(low), reference))
        << name_of(kind) << ": autocast had no effect";
    const double scale = reference.abs().max().item<double>();
    EXPECT_LT((full_precision(low) - reference).abs().max().item<double>(), 0.05 * scale)
        << name_of(kind);
    full_precision(low).sum().backward();  // and backward runs through the mixed graph
    for (const auto& p : model->parameters()) EXPECT_TRUE(p.grad().defined()) << name_of(kind);
    // Checkpointed layers recompute under the autocast of their forward (autograd's threads
    // have none): the same gradients.
    model->set_checkpoint_layers(true);
    std::vector<torch::Tensor> expected;
    for (const auto& p : model->parameters()) {
      expected.push_back(p.grad().clone());
      p.mutable_grad().zero_();
    }
    at::autocast::set_autocast_enabled(at::kCPU, true);
    const torch::Tensor again = model->forward(blocks, x);
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
    full_precision(again).sum().backward();
    const auto parameters = model->parameters();
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      EXPECT_TRUE(torch::allclose(parameters[i].grad(), expected[i], 1e-3, 1e-4))
          << name_of(kind) << i;
    }
  }
}

}  // namespace
}  // namespace graphloom::nn
