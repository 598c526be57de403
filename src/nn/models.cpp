// The models as stacks of layers with dropout and activations between them.
#include "graphloom/nn/models.h"

#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/nn/checkpoint.h"
#include "graphloom/nn/dropout.h"
#include "graphloom/nn/layers.h"
#include "graphloom/nn/linear.h"
#include "graphloom/nn/relational_layers.h"

namespace graphloom::nn {

c10::Device GnnModel::device() const {
  const auto all = parameters();
  return all.empty() ? c10::Device(c10::DeviceType::CPU) : all.front().device();
}

torch::Tensor GnnModel::forward(const std::vector<sampling::Block>& blocks, torch::Tensor x,
                                const at::Tensor& x_rows) {
  GL_CHECK(static_cast<int64_t>(blocks.size()) == num_layers(),
           "the model has {} layers but the mini-batch has {} blocks (check --fanouts)",
           num_layers(), blocks.size());
  for (int64_t l = 0; l < num_layers(); ++l) {
    BlockView block = BlockView::of(blocks[l]);
    if (l == 0) block.source_rows = x_rows;
    if (checkpoint_layers_ && is_training()) {
      x = checkpoint(
          [this, l, block](const torch::Tensor& in) { return layer_forward(l, block, in); }, x,
          layer_parameters(l));
    } else {
      x = layer_forward(l, block, x);
    }
  }
  return x;
}

namespace {

// Shared skeleton: `layers_` convolutions, dropout before each, an activation between.
// Layer l's output is the next layer's input after activation and dropout.
template <typename Layer>
class StackedModel : public GnnModel {
 public:
  StackedModel(const ModelConfig& config, bool elu) : config_(config), elu_(elu) {
    if (config.layers < 1) {
      throw OptionError("model.layers", fmt::format("must be >= 1, got {}", config.layers));
    }
    dropout_ = register_module("dropout", FastDropout(config.dropout));
    const bool paper_input_dropout =
        config.kind == ModelKind::kGcn || config.kind == ModelKind::kGat;
    const double input = config.input_dropout >= 0 ? config.input_dropout
                                                   : (paper_input_dropout ? config.dropout : 0.0);
    input_dropout_ = register_module("input_dropout", FastDropout(input));
  }
  int64_t num_layers() const override { return static_cast<int64_t>(layers_.size()); }
  int64_t output_dim(int64_t layer) const override {
    return dims_[static_cast<std::size_t>(layer)];
  }

  std::vector<torch::Tensor> layer_parameters(int64_t layer) const override {
    return layers_[static_cast<std::size_t>(layer)]->parameters();
  }
  bool reads_input_table() const override {
    return input_dropout_->p() == 0 && first_layer_reads_table();
  }
  torch::Tensor layer_forward(int64_t layer, const BlockView& block,
                              const torch::Tensor& x) override {
    BlockView edges = block;
    torch::Tensor in = x;
    if (block.source_rows.defined() && !(layer == 0 && reads_input_table())) {
      in = x.index_select(0, block.source_rows);
      edges.source_rows = at::Tensor();
    }
    // A hidden layer's input dropout is applied by the layer before, fused with its activation.
    if (layer == 0) in = input_dropout_(in);
    Layer& conv = layers_[static_cast<std::size_t>(layer)];
    if (layer + 1 == num_layers()) return conv->forward(edges, in);
    if (elu_) return dropout_(torch::elu(conv->forward(edges, in)));
    // A layer that can fuses relu and dropout into its last product.
    if constexpr (requires { conv->forward_relu_dropout(edges, in, 0.5, true); }) {
      return conv->forward_relu_dropout(edges, in, dropout_->p(), is_training());
    } else {
      return relu_dropout(conv->forward(edges, in), dropout_->p(), is_training());
    }
  }

 protected:
  void add(Layer layer, int64_t output_dim) {
    layers_.push_back(register_module("layer" + std::to_string(layers_.size()), layer));
    dims_.push_back(output_dim);
  }
  std::vector<Layer>& layers() { return layers_; }
  const std::vector<Layer>& layers() const { return layers_; }
  virtual bool first_layer_reads_table() const { return false; }
  ModelConfig config_;

 private:
  bool elu_;
  FastDropout dropout_{nullptr};
  FastDropout input_dropout_{nullptr};
  std::vector<Layer> layers_;
  std::vector<int64_t> dims_;
};

int64_t width(const ModelConfig& c, int64_t layer) {
  return layer + 1 == c.layers ? c.out : c.hidden;
}
int64_t input_width(const ModelConfig& c, int64_t layer) { return layer == 0 ? c.in : c.hidden; }

class GraphSAGE : public StackedModel<SAGEConv> {
 public:
  explicit GraphSAGE(const ModelConfig& c) : StackedModel(c, /*elu=*/false) {
    for (int64_t l = 0; l < c.layers; ++l) {
      add(SAGEConv(input_width(c, l), width(c, l), c.aggregator), width(c, l));
    }
  }

 private:
  bool first_layer_reads_table() const override { return layers().front()->reads_table(); }
};

class GCN : public StackedModel<GraphConv> {
 public:
  explicit GCN(const ModelConfig& c) : StackedModel(c, /*elu=*/false) {
    for (int64_t l = 0; l < c.layers; ++l)
      add(GraphConv(input_width(c, l), width(c, l)), width(c, l));
  }
  void set_graph_degrees(const at::Tensor& in_degrees, const at::Tensor& out_degrees) override {
    for (auto& layer : layers()) layer->set_graph_degrees(in_degrees, out_degrees);
  }
};

class GAT : public StackedModel<GATConv> {
 public:
  explicit GAT(const ModelConfig& c) : StackedModel(c, /*elu=*/true) {
    for (int64_t l = 0; l < c.layers; ++l) {
      const bool last = l + 1 == c.layers;
      const int64_t in = l == 0 ? c.in : c.hidden * c.heads;
      add(GATConv(in, width(c, l), last ? 1 : c.heads, /*concat=*/!last, c.attention_dropout),
          last ? c.out : c.hidden * c.heads);
    }
  }
};

// Typed graphs: R-GCN sums the relations' messages, relational GraphSAGE averages them.
class RelationalModel : public StackedModel<RelationalConv> {
 public:
  explicit RelationalModel(const ModelConfig& c) : StackedModel(c, /*elu=*/false) {
    if (c.num_relations <= 0) {
      throw OptionError("model.kind", fmt::format("{} needs a typed graph (node_types and "
                                                  "edge_types in the dataset)",
                                                  name_of(c.kind)));
    }
    for (int64_t l = 0; l < c.layers; ++l) {
      add(RelationalConv(input_width(c, l), width(c, l), c.num_relations,
                         c.kind == ModelKind::kRgcn ? "sum" : "mean"),
          width(c, l));
    }
  }
};

// Feature-only baseline: the block's destination rows through linear layers; edges unused.
class MLPLayerImpl : public torch::nn::Module {
 public:
  MLPLayerImpl(int64_t in, int64_t out) { fc_ = register_module("fc", torch::nn::Linear(in, out)); }
  torch::Tensor forward(const BlockView& block, const torch::Tensor& x) {
    return nn::linear(destination_rows(block, x), fc_->weight, fc_->bias);
  }

 private:
  torch::nn::Linear fc_{nullptr};
};
TORCH_MODULE(MLPLayer);

class MLP : public StackedModel<MLPLayer> {
 public:
  explicit MLP(const ModelConfig& c) : StackedModel(c, /*elu=*/false) {
    for (int64_t l = 0; l < c.layers; ++l)
      add(MLPLayer(input_width(c, l), width(c, l)), width(c, l));
  }

 private:
  bool first_layer_reads_table() const override { return true; }
};

}  // namespace

std::shared_ptr<GnnModel> make_model(const ModelConfig& config) {
  GL_CHECK(config.in > 0 && config.out > 0 && config.hidden > 0,
           "model sizes must be positive (in {}, hidden {}, out {})", config.in, config.hidden,
           config.out);
  std::shared_ptr<GnnModel> model;
  switch (config.kind) {
    case ModelKind::kSage:
      model = std::make_shared<GraphSAGE>(config);
      break;
    case ModelKind::kGcn:
      model = std::make_shared<GCN>(config);
      break;
    case ModelKind::kGat:
      model = std::make_shared<GAT>(config);
      break;
    case ModelKind::kMlp:
      model = std::make_shared<MLP>(config);
      break;
    case ModelKind::kRgcn:
    case ModelKind::kRsage:
      model = std::make_shared<RelationalModel>(config);
      break;
    case ModelKind::kLightGcn:
      throw OptionError("model.kind",
                        "lightgcn is a link-prediction encoder: it needs `task` link");
  }
  model->set_checkpoint_layers(config.checkpoint_layers);
  return model;
}

}  // namespace graphloom::nn
