// GNN models (GraphSAGE, GCN, GAT, R-GCN, relational GraphSAGE) and the feature-only MLP
// baseline, all applied layer by
// layer so that training (sampled blocks) and layer-wise full-neighbor inference share code.
#pragma once

#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "graphloom/nn/model_config.h"
#include "graphloom/nn/sparse_ops.h"
#include "graphloom/sampling/block.h"

namespace graphloom::nn {

class GnnModel : public torch::nn::Module {
 public:
  virtual int64_t num_layers() const = 0;
  // Width of layer l's output.
  virtual int64_t output_dim(int64_t layer) const = 0;
  // Layer l: the input dropout (layer 0), the convolution and, except for the last layer, the
  // activation and the next layer's input dropout.
  virtual torch::Tensor layer_forward(int64_t layer, const BlockView& block,
                                      const torch::Tensor& x) = 0;
  // The parameters of layer l (what a checkpointed layer hands gradients to).
  virtual std::vector<torch::Tensor> layer_parameters(int64_t layer) const = 0;
  // Whole-graph degrees for layers that normalize by them (GCN); others ignore them.
  virtual void set_graph_degrees(const at::Tensor& in_degrees, const at::Tensor& out_degrees) {}
  // Applies every layer: blocks[0] to the input rows x, blocks.back() yields the seeds' logits.
  // With x_rows, x is a table (e.g. the whole feature table) and input node i is its row
  // x_rows[i]: the first layer reads those rows in place if it can, or gathers them first.
  torch::Tensor forward(const std::vector<sampling::Block>& blocks, torch::Tensor x,
                        const at::Tensor& x_rows = {});
  // Whether forward() with x_rows reads the table in place, without a gathered copy; if not,
  // callers should rather gather the rows where it overlaps with training (the loader).
  virtual bool reads_input_table() const { return false; }
  void set_checkpoint_layers(bool enabled) { checkpoint_layers_ = enabled; }
  // Where the parameters live (after to(device)); the CPU for a model without any.
  c10::Device device() const;

 private:
  bool checkpoint_layers_ = false;
};

// Builds the model config.kind names; throws graphloom::OptionError for lightgcn (built by the
// link-prediction task).
std::shared_ptr<GnnModel> make_model(const ModelConfig& config);

}  // namespace graphloom::nn
