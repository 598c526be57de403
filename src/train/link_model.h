// LinkModel (private to the train module): the link-prediction encoder (a GNN, or LightGCN's
// propagation), its optional input embedding, the pair scorer and the destination bias in one
// module, so that checkpoints and the best-validation snapshot cover all of them.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

#include "graphloom/base/error.h"
#include "graphloom/nn/models.h"
#include "graphloom/nn/sparse_ops.h"
#include "graphloom/train/link_prediction.h"

namespace graphloom::train {

class LinkModel : public torch::nn::Module {
 public:
  // `prior`: undefined, or float [num_nodes] fixed per-destination scores (a popularity prior),
  // added with a learned scale. Like the bias it scores the destination only, also on
  // symmetric targets.
  LinkModel(const nn::ModelConfig& encoder, int64_t num_nodes, int64_t embed_dim, Scorer scorer,
            bool destination_bias, const at::Tensor& prior)
      : lightgcn_layers_(encoder.kind == nn::ModelKind::kLightGcn ? encoder.layers : 0) {
    if (destination_bias) bias_ = register_parameter("bias", torch::zeros({num_nodes}));
    // The prior is not a buffer: it follows from the data and flags of each run, so a resumed
    // run recomputes it rather than reading a stale one from the checkpoint.
    if (prior.defined()) {
      prior_ = prior;
      prior_scale_ = register_parameter("prior_scale", torch::ones({1}));
    }
    if (lightgcn_layers_ == 0) encoder_ = register_module("encoder", nn::make_model(encoder));
    if (embed_dim > 0) {
      embedding_ = register_module("embedding", torch::nn::Embedding(num_nodes, embed_dim));
      // LightGCN's reference code starts from N(0, 0.1): dot products of unit-variance rows
      // would start BPR saturated.
      if (lightgcn_layers_ > 0) torch::nn::init::normal_(embedding_->weight, 0.0, 0.1);
    }
    if (scorer == Scorer::kMlp) {
      const int64_t width = encoder.out;
      mlp_ = register_module(
          "scorer", torch::nn::Sequential(torch::nn::Linear(width, width), torch::nn::ReLU(),
                                          torch::nn::Linear(width, 1)));
    }
  }

  nn::GnnModel& encoder() { return *encoder_; }
  bool is_lightgcn() const { return lightgcn_layers_ > 0; }
  // LightGCN (He et al., SIGIR 2020) over the whole graph: no weights or activations, each
  // layer the symmetric-normalized sum over neighbors, a node's embedding the mean of its
  // layers (the learnable embedding included).
  torch::Tensor propagate(const nn::BlockView& whole, const at::Tensor& edge_norm) {
    torch::Tensor h = embedding_->weight;
    torch::Tensor sum = h;
    for (int64_t layer = 0; layer < lightgcn_layers_; ++layer) {
      h = nn::aggregate(whole, h, nn::Reduce::kSum, edge_norm);
      sum = sum + h;
    }
    return sum / static_cast<double>(lightgcn_layers_ + 1);
  }
  bool has_embedding() const { return !embedding_.is_empty(); }
  void zero_rows(const at::Tensor& mask) {
    torch::NoGradGuard no_grad;
    embedding_->weight.index_put_({mask.to(device_)}, 0.0);
  }
  // Parameters and the fixed prior (not a buffer, see the constructor) on `device`.
  void place(c10::Device device) {
    to(device);
    if (prior_.defined()) prior_ = prior_.to(device);
    device_ = device;
  }
  c10::Device device() const { return device_; }
  torch::Tensor embed(const torch::Tensor& ids) { return embedding_->forward(ids); }

  // One score (a logit) per pair of rows; `v_ids` are the destinations' node ids (their bias).
  torch::Tensor score(const torch::Tensor& u, const torch::Tensor& v, const at::Tensor& v_ids) {
    const torch::Tensor product = u * v;
    torch::Tensor logit = mlp_.is_empty() ? product.sum(1) : mlp_->forward(product).squeeze(1);
    if (prior_.defined()) logit = logit + prior_scale_ * prior_.index_select(0, v_ids);
    return bias_.defined() ? logit + bias_.index_select(0, v_ids) : logit;
  }

 private:
  int64_t lightgcn_layers_;
  c10::Device device_ = at::kCPU;
  std::shared_ptr<nn::GnnModel> encoder_;
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::Sequential mlp_{nullptr};
  torch::Tensor bias_;         // per destination node: a learned popularity prior
  torch::Tensor prior_;        // per destination node, fixed
  torch::Tensor prior_scale_;  // learned
};

}  // namespace graphloom::train
