// Relational convolutions for typed graphs (DGL's RelGraphConv and HeteroGraphConv pattern):
// one message function per edge type over the block's edges of that type, combined per
// destination. Blocks must carry edge_types (sampled from a graph with type_per_edge).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graphloom/nn/sparse_ops.h"

namespace graphloom::nn {

// One view per edge type over the same sources and destinations, holding only that type's
// edges (in the block's order). Throws graphloom::Error when the block has no edge types or
// one is outside [0, num_types).
std::vector<BlockView> split_by_edge_type(const BlockView& block, int64_t num_types);

// out_i = W_self h_i + combine_r W_r mean_{j in N_r(i)} h_j + b.
// combine "sum" is R-GCN (Schlichtkrull et al. 2018, normalization c_{i,r} = |N_r(i)|);
// "mean" averages over the relations that reach i in the block, as relational GraphSAGE does
// (DGL's HeteroGraphConv of mean SAGEConvs with aggregate="mean", one shared self weight).
class RelationalConvImpl : public torch::nn::Module {
 public:
  RelationalConvImpl(int64_t in, int64_t out, int64_t num_relations, std::string combine);
  torch::Tensor forward(const BlockView& block, const torch::Tensor& x);

 private:
  int64_t num_relations_;
  std::string combine_;
  torch::nn::Linear fc_self_{nullptr};
  torch::nn::ModuleList fc_relation_;
  torch::Tensor bias_;
};
TORCH_MODULE(RelationalConv);

}  // namespace graphloom::nn
