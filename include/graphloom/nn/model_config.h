// What a GNN model is made of (kind, widths, depth, dropout), apart from the model itself, so
// that option structs and command lines can name a model without the libtorch module headers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "graphloom/base/enum_names.h"

namespace graphloom::nn {

// lightgcn is a link-prediction encoder (learnable embeddings propagated over the whole graph);
// rgcn and rsage take typed graphs.
enum class ModelKind { kSage, kGcn, kGat, kMlp, kRgcn, kRsage, kLightGcn };

struct ModelConfig {
  ModelKind kind = ModelKind::kSage;
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

namespace graphloom {
template <>
struct EnumNames<nn::ModelKind> {
  static constexpr std::array<std::pair<std::string_view, nn::ModelKind>, 7> kNames{
      {{"sage", nn::ModelKind::kSage},
       {"gcn", nn::ModelKind::kGcn},
       {"gat", nn::ModelKind::kGat},
       {"mlp", nn::ModelKind::kMlp},
       {"rgcn", nn::ModelKind::kRgcn},
       {"rsage", nn::ModelKind::kRsage},
       {"lightgcn", nn::ModelKind::kLightGcn}}};
};
}  // namespace graphloom
