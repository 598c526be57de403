// What a GNN model is made of (kind, widths, depth, dropout), apart from the model itself, so
// that option structs and command lines can name a model without the libtorch module headers.
#pragma once

#include <cstdint>
#include <string>

namespace graphloom::nn {

struct ModelConfig {
  std::string kind = "sage";  // sage | gcn | gat | mlp | rgcn | rsage
  int64_t in = 0;
  int64_t hidden = 256;
  int64_t out = 0;
  int64_t layers = 3;
  double dropout = 0.5;  // on the input of every hidden layer
  // On the input features: -1 = the model's convention (gcn, gat: `dropout` as in their papers;
  // sage, mlp: none, as DGL's mini-batch GraphSAGE example).
  double input_dropout = -1;
  std::string aggregator = "mean";  // SAGE: mean | gcn | pool
  int64_t heads = 8;                // GAT hidden layers (the output layer has one head)
  double attention_dropout = 0.5;   // GAT
  int64_t num_relations = 0;        // rgcn, rsage: the graph's edge types
  // Recompute each layer's activations in backward instead of keeping them (training only).
  bool checkpoint_layers = false;
};

}  // namespace graphloom::nn
