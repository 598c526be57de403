// SAGEConv, GraphConv and GATConv.
#include "graphloom/nn/layers.h"

#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/nn/dropout.h"
#include "graphloom/nn/linear.h"

namespace graphloom::nn {

namespace F = torch::nn::functional;

SAGEConvImpl::SAGEConvImpl(int64_t in, int64_t out, std::string aggregator)
    : aggregator_(std::move(aggregator)) {
  GL_CHECK(aggregator_ == "mean" || aggregator_ == "gcn" || aggregator_ == "pool",
           "SAGEConv: unknown aggregator '{}' (expected mean, gcn or pool)", aggregator_);
  project_first_ = aggregator_ != "pool" && in > out;
  if (aggregator_ != "gcn") {
    fc_self_ = register_module("fc_self",
                               torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)));
  }
  if (aggregator_ == "pool") fc_pool_ = register_module("fc_pool", torch::nn::Linear(in, in));
  fc_neigh_ =
      register_module("fc_neigh", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)));
  bias_ = register_parameter("bias", torch::zeros({out}));
}

void SAGEConvImpl::check_input(const BlockView& block) const {
  GL_CHECK(!block.source_rows.defined() || reads_table(),
           "SAGEConv ({} aggregator, projecting first: {}) cannot read its input in place",
           aggregator_, project_first_);
}

torch::Tensor SAGEConvImpl::self_and_neighbor_weight() const {
  return at::cat({fc_self_->weight, fc_neigh_->weight}, 1);
}

torch::Tensor SAGEConvImpl::forward(const BlockView& block, const torch::Tensor& x) {
  check_input(block);
  if (aggregator_ == "pool") {
    const torch::Tensor pooled = aggregate(
        block, torch::relu(nn::linear(x, fc_pool_->weight, fc_pool_->bias)), Reduce::kMax);
    return nn::linear(x.slice(0, 0, block.num_dst()), fc_self_->weight, bias_) +
           nn::linear(pooled, fc_neigh_->weight);
  }
  const Reduce reduce = aggregator_ == "mean" ? Reduce::kMean : Reduce::kSum;
  const int64_t num_dst = block.num_dst();
  if (project_first_) {
    const torch::Tensor x_dst = x.slice(0, 0, num_dst);
    const torch::Tensor source = nn::linear(x, fc_neigh_->weight);
    torch::Tensor neigh = aggregate(block, source, reduce);
    if (aggregator_ == "mean") return nn::linear(x_dst, fc_self_->weight, bias_) + neigh;
    const torch::Tensor degree = in_degrees(block).to(neigh.scalar_type()).unsqueeze(1);
    return (neigh + source.slice(0, 0, num_dst)) / (degree + 1) + bias_;
  }
  // [h_dst | aggregated], the block's source rows read in place when it names them.
  const torch::Tensor both = self_and_neighbors(block, x, reduce);
  const int64_t in = both.size(1) / 2;
  if (aggregator_ == "mean") {
    return nn::linear(both, self_and_neighbor_weight(), bias_);
  }
  // gcn: the mean over the neighbors and the node itself
  const torch::Tensor degree = in_degrees(block).to(both.scalar_type()).unsqueeze(1);
  const torch::Tensor neigh = (both.narrow(1, 0, in) + both.narrow(1, in, in)) / (degree + 1);
  return nn::linear(neigh, fc_neigh_->weight, bias_);
}

torch::Tensor SAGEConvImpl::forward_relu_dropout(const BlockView& block, const torch::Tensor& x,
                                                 double p, bool training) {
  if (aggregator_ != "mean" || project_first_) return relu_dropout(forward(block, x), p, training);
  check_input(block);
  return linear_relu_dropout(self_and_neighbors(block, x, Reduce::kMean),
                             self_and_neighbor_weight(), bias_, p, training);
}

GraphConvImpl::GraphConvImpl(int64_t in, int64_t out) {
  fc_ = register_module("fc", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)));
  torch::nn::init::xavier_uniform_(fc_->weight);
  bias_ = register_parameter("bias", torch::zeros({out}));
}

void GraphConvImpl::set_graph_degrees(const at::Tensor& in_degrees, const at::Tensor& out_degrees) {
  graph_in_degrees_ = in_degrees;
  graph_out_degrees_ = out_degrees;
}

torch::Tensor GraphConvImpl::forward(const BlockView& block, const torch::Tensor& x) {
  const auto dtype = x.scalar_type();
  torch::Tensor src_norm;
  torch::Tensor dst_norm;
  const torch::Tensor sampled = in_degrees(block).clamp_min(1).to(dtype).unsqueeze(1);
  if (graph_in_degrees_.defined()) {
    GL_CHECK(block.src_ids.defined(), "GraphConv with graph degrees needs the block's src_ids");
    // The whole graph's degrees stay in host memory; a batch on a device reads its rows there.
    const at::Tensor src_ids = block.src_ids.to(graph_out_degrees_.device());
    const at::Tensor dst_ids = src_ids.slice(0, 0, block.num_dst());
    src_norm = graph_out_degrees_.index_select(0, src_ids)
                   .to(x.device())
                   .clamp_min(1)
                   .to(dtype)
                   .pow(-0.5)
                   .unsqueeze(1);
    const torch::Tensor dst_degree = graph_in_degrees_.index_select(0, dst_ids)
                                         .to(x.device())
                                         .clamp_min(1)
                                         .to(dtype)
                                         .unsqueeze(1);
    dst_norm = dst_degree.pow(0.5) / sampled;  // d^-1/2 * (d / sampled)
  } else {
    src_norm = out_degrees(block).clamp_min(1).to(dtype).pow(-0.5).unsqueeze(1);
    dst_norm = sampled.pow(-0.5);
  }
  const bool project_first = fc_->weight.size(1) > fc_->weight.size(0);
  torch::Tensor h = x * src_norm;
  if (project_first) h = nn::linear(h, fc_->weight);
  h = aggregate(block, h, Reduce::kSum) * dst_norm;
  if (!project_first) h = nn::linear(h, fc_->weight);
  return h + bias_;
}

GATConvImpl::GATConvImpl(int64_t in, int64_t out, int64_t heads, bool concat,
                         double attention_dropout)
    : out_(out), heads_(heads), concat_(concat) {
  GL_CHECK(heads > 0, "GATConv: heads must be positive, got {}", heads);
  fc_ = register_module("fc",
                        torch::nn::Linear(torch::nn::LinearOptions(in, out * heads).bias(false)));
  attention_src_ = register_parameter("attention_src", torch::empty({1, heads, out}));
  attention_dst_ = register_parameter("attention_dst", torch::empty({1, heads, out}));
  bias_ = register_parameter("bias", torch::zeros({concat ? heads * out : out}));
  attention_dropout_ = register_module("attention_dropout", FastDropout(attention_dropout));
  const double gain = std::sqrt(2.0);  // DGL: calculate_gain("relu")
  torch::nn::init::xavier_normal_(fc_->weight, gain);
  torch::nn::init::xavier_normal_(attention_src_, gain);
  torch::nn::init::xavier_normal_(attention_dst_, gain);
}

torch::Tensor GATConvImpl::forward(const BlockView& block, const torch::Tensor& x) {
  const torch::Tensor features = nn::linear(x, fc_->weight).view({x.size(0), heads_, out_});
  const torch::Tensor score_src = (features * attention_src_).sum(-1);
  const torch::Tensor score_dst = (features.slice(0, 0, block.num_dst()) * attention_dst_).sum(-1);
  const torch::Tensor scores = F::leaky_relu(edge_add(block, score_src, score_dst),
                                             F::LeakyReLUFuncOptions().negative_slope(0.2));
  const torch::Tensor attention = attention_dropout_(edge_softmax(block, scores));
  const torch::Tensor out = aggregate(block, features, Reduce::kSum, attention);
  return concat_ ? out.reshape({block.num_dst(), heads_ * out_}) + bias_ : out.mean(1) + bias_;
}

}  // namespace graphloom::nn
