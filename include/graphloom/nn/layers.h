// Graph convolution layers over a Block, with DGL's semantics. Input rows are the block's
// sources; the destinations are their first num_dst rows; the output has one row per
// destination.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <string>

#include "graphloom/nn/dropout.h"
#include "graphloom/nn/sparse_ops.h"

namespace graphloom::nn {

// GraphSAGE (Hamilton et al.): fc_self(h_dst) + fc_neigh(aggregate(h_src)) + bias.
// Aggregators: "mean", "gcn" (mean over neighbors and self, no fc_self), "pool" (max over
// relu(fc_pool(h_src))).
class SAGEConvImpl : public torch::nn::Module {
 public:
  SAGEConvImpl(int64_t in, int64_t out, std::string aggregator);
  torch::Tensor forward(const BlockView& block, const torch::Tensor& x);
  // relu_dropout(forward(block, x), p, training), with the same mask; the mean aggregator
  // fuses it into its dense product (linear_relu_dropout).
  torch::Tensor forward_relu_dropout(const BlockView& block, const torch::Tensor& x, double p,
                                     bool training);
  // Whether forward() reads a table input (block.source_rows) in place: mean and gcn
  // aggregation before projecting only touch the sampled rows.
  bool reads_table() const { return aggregator_ != "pool" && !project_first_; }

 private:
  void check_input(const BlockView& block) const;
  // [W_self | W_neigh], for the product with [h_dst | aggregated]
  torch::Tensor self_and_neighbor_weight() const;
  std::string aggregator_;
  bool project_first_;  // mean/gcn with in > out: project before aggregating (fewer flops)
  torch::nn::Linear fc_self_{nullptr};
  torch::nn::Linear fc_neigh_{nullptr};
  torch::nn::Linear fc_pool_{nullptr};
  torch::Tensor bias_;
};
TORCH_MODULE(SAGEConv);

// GCN (Kipf & Welling): D_dst^-1/2 A D_src^-1/2 X W + b.
// With graph degrees set (set_graph_degrees), the degrees are the whole graph's and a sampled
// destination's sum is scaled by degree / sampled count, an unbiased estimate that equals
// Kipf's formula when every neighbor is present. Without them, degrees are counted in the
// block (clamped to at least 1), as DGL's GraphConv(norm="both") does.
class GraphConvImpl : public torch::nn::Module {
 public:
  GraphConvImpl(int64_t in, int64_t out);
  torch::Tensor forward(const BlockView& block, const torch::Tensor& x);
  // int64 [num_nodes] each; blocks must then carry src_ids.
  void set_graph_degrees(const at::Tensor& in_degrees, const at::Tensor& out_degrees);

 private:
  torch::nn::Linear fc_{nullptr};
  torch::Tensor bias_;
  at::Tensor graph_in_degrees_;
  at::Tensor graph_out_degrees_;
};
TORCH_MODULE(GraphConv);

// GAT (Velickovic et al.): multi-head attention over in-edges with LeakyReLU(0.2) scores,
// attention dropout, heads concatenated ([num_dst, heads * out]) or averaged ([num_dst, out]).
class GATConvImpl : public torch::nn::Module {
 public:
  GATConvImpl(int64_t in, int64_t out, int64_t heads, bool concat, double attention_dropout);
  torch::Tensor forward(const BlockView& block, const torch::Tensor& x);

 private:
  int64_t out_;
  int64_t heads_;
  bool concat_;
  torch::nn::Linear fc_{nullptr};
  torch::Tensor attention_src_;
  torch::Tensor attention_dst_;
  torch::Tensor bias_;
  FastDropout attention_dropout_{nullptr};
};
TORCH_MODULE(GATConv);

}  // namespace graphloom::nn
