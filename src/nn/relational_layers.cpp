// RelationalConv: per-relation mean aggregation over the block split by edge type.
#include "graphloom/nn/relational_layers.h"

#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/nn/linear.h"

namespace graphloom::nn {

std::vector<BlockView> split_by_edge_type(const BlockView& block, int64_t num_types) {
  GL_CHECK(block.edge_types.defined(),
           "a relational layer needs typed blocks: the graph has no edge types (type_per_edge)");
  GL_CHECK(block.edge_types.numel() == block.num_edges(),
           "block edge_types: expected {} values, got {}", block.num_edges(),
           block.edge_types.numel());
  if (block.num_edges() > 0) {
    const int64_t high = block.edge_types.max().item<int64_t>();
    const int64_t low = block.edge_types.min().item<int64_t>();
    GL_CHECK(low >= 0 && high < num_types,
             "block edge type {} is outside [0, {}): the model was built for {} relations",
             low < 0 ? low : high, num_types, num_types);
  }
  const at::Tensor dst =
      at::repeat_interleave(at::arange(block.num_dst(), at::kLong),
                            block.indptr.slice(0, 1) - block.indptr.slice(0, 0, -1));
  std::vector<BlockView> views;
  views.reserve(static_cast<std::size_t>(num_types));
  for (int64_t r = 0; r < num_types; ++r) {
    const at::Tensor positions = (block.edge_types == r).nonzero().squeeze(1);
    const at::Tensor counts =
        at::bincount(dst.index_select(0, positions), /*weights=*/{}, block.num_dst());
    BlockView view;
    view.indptr = at::cat({at::zeros({1}, at::kLong), at::cumsum(counts, 0)});
    view.indices = block.indices.index_select(0, positions);
    view.num_src = block.num_src;
    view.src_ids = block.src_ids;
    view.edge_types = at::full({positions.numel()}, r, at::kLong);
    if (block.edge_weights.defined()) {
      view.edge_weights = block.edge_weights.index_select(0, positions);
    }
    views.push_back(std::move(view));
  }
  return views;
}

RelationalConvImpl::RelationalConvImpl(int64_t in, int64_t out, int64_t num_relations,
                                       std::string combine)
    : num_relations_(num_relations), combine_(std::move(combine)) {
  GL_CHECK(num_relations > 0, "a relational layer needs at least one edge type, got {}",
           num_relations);
  GL_CHECK(combine_ == "sum" || combine_ == "mean",
           "relational combine must be sum or mean, got '{}'", combine_);
  fc_self_ =
      register_module("fc_self", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)));
  fc_relation_ = register_module("fc_relation", torch::nn::ModuleList());
  for (int64_t r = 0; r < num_relations; ++r) {
    fc_relation_->push_back(torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)));
  }
  bias_ = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor RelationalConvImpl::forward(const BlockView& block, const torch::Tensor& x) {
  const std::vector<BlockView> views = split_by_edge_type(block, num_relations_);
  torch::Tensor messages;
  at::Tensor reached = at::zeros({block.num_dst(), 1}, at::kFloat);
  for (int64_t r = 0; r < num_relations_; ++r) {
    const BlockView& view = views[static_cast<std::size_t>(r)];
    if (view.num_edges() == 0) continue;
    const torch::Tensor neigh = aggregate(view, x, Reduce::kMean);
    const torch::Tensor term = nn::linear(
        neigh, fc_relation_[static_cast<std::size_t>(r)]->as<torch::nn::Linear>()->weight);
    messages = messages.defined() ? messages + term : term;
    reached += (in_degrees(view) > 0).to(at::kFloat).unsqueeze(1);
  }
  torch::Tensor out = nn::linear(x.slice(0, 0, block.num_dst()), fc_self_->weight, bias_);
  if (!messages.defined()) return out;
  if (combine_ == "mean") messages = messages / reached.clamp_min(1).to(messages.scalar_type());
  return out + messages;
}

}  // namespace graphloom::nn
