// The generic path (ATen tensor ops: what tensors on a GPU take) against the native CPU
// kernels, op by op and through whole models, forward and gradients: GenericOpsScope sends
// CPU tensors down the generic path.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "graphloom/nn/models.h"
#include "graphloom/nn/sparse_ops.h"
#include "graphloom/sampling/block.h"

namespace graphloom::nn {
namespace {

// 40 destinations among 60 sources, some without in-edges, some with repeated sources.
BlockView random_block() {
  torch::manual_seed(21);
  const torch::Tensor degrees = torch::randint(0, 6, {40}, torch::kLong);
  const torch::Tensor indptr = torch::cat({torch::zeros({1}, torch::kLong), degrees.cumsum(0)});
  const int64_t edges = indptr[-1].item<int64_t>();
  return {indptr, torch::randint(60, {edges}, torch::kLong), 60};
}

// The op's value and the gradients of `inputs` through a fixed random projection of it, on the
// native or the generic path.
template <typename Op>
std::vector<torch::Tensor> value_and_grads(Op op, const std::vector<torch::Tensor>& inputs,
                                           bool generic) {
  std::vector<torch::Tensor> leaves;
  for (const auto& input : inputs) leaves.push_back(input.detach().clone().requires_grad_(true));
  torch::Tensor out;
  if (generic) {
    const GenericOpsScope scope;
    out = op(leaves);
  } else {
    out = op(leaves);
  }
  torch::manual_seed(5);
  (out * torch::randn_like(out)).sum().backward();
  std::vector<torch::Tensor> result{out.detach()};
  for (const auto& leaf : leaves) result.push_back(leaf.grad());
  return result;
}

template <typename Op>
void expect_same_on_both_paths(Op op, const std::vector<torch::Tensor>& inputs,
                               const std::string& what) {
  const auto native = value_and_grads(op, inputs, false);
  const auto generic = value_and_grads(op, inputs, true);
  for (std::size_t i = 0; i < native.size(); ++i) {
    EXPECT_TRUE(torch::allclose(native[i], generic[i], 1e-5, 1e-6))
        << what << (i == 0 ? " value" : " gradient " + std::to_string(i - 1));
  }
}

TEST(GenericOps, AggregationMatchesTheNativeKernels) {
  const BlockView block = random_block();
  const torch::Tensor x2 = torch::randn({60, 7});
  const torch::Tensor x3 = torch::randn({60, 3, 4});
  const torch::Tensor weight = torch::rand({block.num_edges(), 3});
  for (const Reduce reduce : {Reduce::kSum, Reduce::kMean, Reduce::kMax}) {
    const std::string name = "reduce " + std::to_string(static_cast<int>(reduce));
    expect_same_on_both_paths([&](const auto& in) { return aggregate(block, in[0], reduce); }, {x2},
                              name + " 2-D");
    expect_same_on_both_paths([&](const auto& in) { return aggregate(block, in[0], reduce); }, {x3},
                              name + " 3-D");
  }
  expect_same_on_both_paths(
      [&](const auto& in) { return aggregate(block, in[0], Reduce::kSum, in[1]); }, {x3, weight},
      "weighted sum");
}

TEST(GenericOps, SelfAndNeighborsMatchesTheNativeKernelAlsoOverATable) {
  BlockView block = random_block();
  const torch::Tensor x = torch::randn({60, 6});
  for (const Reduce reduce : {Reduce::kSum, Reduce::kMean}) {
    expect_same_on_both_paths(
        [&](const auto& in) { return self_and_neighbors(block, in[0], reduce); }, {x}, "rows");
  }
  // A first layer reading a 100-row table in place: source s is table row source_rows[s].
  block.source_rows = torch::randperm(100, torch::kLong).slice(0, 0, 60);
  expect_same_on_both_paths(
      [&](const auto& in) { return self_and_neighbors(block, in[0], Reduce::kMean); },
      {torch::randn({100, 6})}, "table");
}

TEST(GenericOps, AttentionOpsMatchTheNativeKernels) {
  const BlockView block = random_block();
  expect_same_on_both_paths([&](const auto& in) { return edge_add(block, in[0], in[1]); },
                            {torch::randn({60, 2}), torch::randn({40, 2})}, "edge_add");
  expect_same_on_both_paths([&](const auto& in) { return edge_softmax(block, in[0]); },
                            {torch::randn({block.num_edges(), 2}) * 5}, "edge_softmax");
}

std::vector<sampling::Block> model_blocks() {
  const BlockView inner = random_block();
  std::vector<sampling::Block> blocks(2);
  // Layer 0: 60 sources -> 40 destinations; layer 1: those 40 -> their first 20.
  blocks[0].src_ids = torch::arange(60, torch::kLong);
  blocks[0].num_dst = 40;
  blocks[0].indptr = inner.indptr;
  blocks[0].indices = inner.indices;
  blocks[1].src_ids = torch::arange(40, torch::kLong);
  blocks[1].num_dst = 20;
  blocks[1].indptr = inner.indptr.slice(0, 0, 21);
  const int64_t edges = blocks[1].indptr[-1].item<int64_t>();
  blocks[1].indices = inner.indices.slice(0, 0, edges).remainder(40);
  return blocks;
}

TEST(GenericOps, EveryModelGivesTheNativeOutputsAndGradients) {
  const auto blocks = model_blocks();
  const torch::Tensor x = torch::randn({60, 8});
  struct Case {
    ModelKind kind;
    std::string aggregator;
  };
  for (const Case& c : {Case{ModelKind::kSage, "mean"}, Case{ModelKind::kSage, "gcn"},
                        Case{ModelKind::kSage, "pool"}, Case{ModelKind::kGcn, "mean"},
                        Case{ModelKind::kGat, "mean"}, Case{ModelKind::kMlp, "mean"}}) {
    torch::manual_seed(2);
    auto model = make_model({.kind = c.kind,
                             .in = 8,
                             .hidden = 16,
                             .out = 3,
                             .layers = 2,
                             .dropout = 0.0,
                             .aggregator = c.aggregator,
                             .heads = 2,
                             .attention_dropout = 0.0});
    model->train();
    std::vector<torch::Tensor> outputs, grads[2];
    for (int generic = 0; generic < 2; ++generic) {
      model->zero_grad();
      torch::Tensor out;
      if (generic) {
        const GenericOpsScope scope;
        out = model->forward(blocks, x);
      } else {
        out = model->forward(blocks, x);
      }
      out.pow(2).sum().backward();
      outputs.push_back(out.detach());
      for (const auto& p : model->parameters()) grads[generic].push_back(p.grad().clone());
    }
    const std::string name = std::string(name_of(c.kind)) + "/" + c.aggregator;
    EXPECT_TRUE(torch::allclose(outputs[0], outputs[1], 1e-4, 1e-5)) << name;
    for (std::size_t i = 0; i < grads[0].size(); ++i) {
      EXPECT_TRUE(torch::allclose(grads[0][i], grads[1][i], 1e-4, 1e-5)) << name << " grad " << i;
    }
  }
}

}  // namespace
}  // namespace graphloom::nn
