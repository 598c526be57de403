// Node classification as a train::Task: the model's logits of each batch's seeds against their
// labels (cross entropy), validated on accuracy and macro F1 by layer-wise full-neighbor
// inference or by sampled blocks; the epoch engine (train/trainer.h) does the rest.
#include "graphloom/train/node_classification.h"

#include <torch/torch.h>

#include "device_placement.h"
#include "eval_mode.h"
#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/features/device_rows.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/nn/models.h"
#include "graphloom/sampling/tensor_neighbor_source.h"
#include "graphloom/train/dataset_inputs.h"
#include "graphloom/train/gradient_sync.h"
#include "graphloom/train/inference.h"
#include "graphloom/train/metrics.h"
#include "graphloom/train/trainer.h"

namespace graphloom::train {
namespace {

using nn::full_precision;

// Logits of `nodes` from mini-batches sampled with the training fanouts (temporal samplers: at
// each node's time in `node_times`). Data-parallel: each rank computes its share and the
// disjoint shares are summed into the whole on every rank.
at::Tensor sampled_logits(nn::GnnModel& model, const sampling::NeighborSampler& sampler,
                          const RowReader& input_rows, const at::Tensor& nodes, int64_t batch_size,
                          distributed::ProcessGroup* group, const RowReader& node_times) {
  torch::NoGradGuard no_grad;
  const EvalModeScope eval(model);
  const int64_t n = nodes.numel();
  const auto [first, last] = data_parallel(group)
                                 ? distributed::rank_share(n, group->rank(), group->world_size())
                                 : std::pair{0L, n};
  at::Tensor out = at::zeros({n, model.output_dim(model.num_layers() - 1)}, at::kFloat);
  for (int64_t begin = first; begin < last; begin += batch_size) {
    const int64_t end = std::min(last, begin + batch_size);
    const at::Tensor seeds = nodes.slice(0, begin, end);
    const at::Tensor times = node_times ? node_times(seeds) : at::Tensor();
    const sampling::MiniBatch batch =
        sampling::to_device(sampler.sample(seeds, times, ~0ULL, begin), model.device());
    out.slice(0, begin, end)
        .copy_(
            model.forward(batch.blocks, input_rows(batch.input_nodes().cpu()).to(model.device())));
  }
  if (data_parallel(group)) group->allreduce(out);
  return out;
}

void check_inputs(const TrainingInputs& inputs, const TrainOptions& options) {
  if (inputs.embedding == nullptr && !inputs.rows->has("feat")) {
    throw OptionError("embed_dim", fmt::format("is needed: '{}' has no node feature 'feat' "
                                               "(learnable input embeddings of that width)",
                                               inputs.name));
  }
  GL_CHECK(options.model.kind != nn::ModelKind::kGcn || inputs.in_degrees.defined(),
           "GCN needs whole-graph degrees, which '{}' does not provide (partition it again with "
           "this graphloom, which records them, or use sage, gat or mlp)",
           inputs.name);
  if (options.temporal && !inputs.node_times) {
    throw OptionError("temporal",
                      fmt::format("'{}' has no node times to sample its seeds at", inputs.name));
  }
}

class NodeClassificationTask : public Task {
 public:
  NodeClassificationTask(const TrainingInputs& inputs, const TrainOptions& options,
                         distributed::ProcessGroup* group);

  const TaskNames& names() const override { return names_; }
  torch::nn::Module& model() override { return *model_; }
  loader::DataLoader& loader() override { return *loader_; }
  StepOutput step(const sampling::MiniBatch& host_batch, const sampling::MiniBatch& batch) override;
  void after_step(const sampling::MiniBatch& batch) override;
  const features::DeviceRows* device_rows() const { return device_rows_.get(); }
  std::map<std::string, torch::Tensor> external_state() override {
    return embedding_ != nullptr ? embedding_->state() : std::map<std::string, torch::Tensor>{};
  }
  void restore_external_state(const std::map<std::string, torch::Tensor>& state) override {
    if (embedding_ != nullptr) embedding_->load_state(state);
  }
  Validation validate() override;
  void test() override;

  double test_acc = 0, test_f1 = 0, test_auc = -1;

 private:
  std::shared_ptr<nn::GnnModel> make(const TrainOptions& options) const;
  // Logits of `nodes` as options.eval says (collective in data-parallel runs).
  at::Tensor logits(const at::Tensor& nodes) const;

  const TaskNames names_{.items = "seeds",
                         .validation_key = "val_acc",
                         .validation = "val acc",
                         .score = "validation accuracy",
                         .train_metrics = {{"train_acc", "train acc"}}};
  const TrainingInputs& inputs_;
  const TrainOptions& options_;
  distributed::ProcessGroup* group_;
  const features::FeatureSource& rows_;
  distributed::DistEmbedding* embedding_;  // learnable input rows instead of "feat", or null
  c10::Device device_;
  // graph_placement device: the training graph on the device, sampled there.
  std::unique_ptr<sampling::TensorNeighborSource> device_graph_;
  sampling::NeighborSampler sampler_;
  sampling::ItemSampler items_;
  RowReader input_rows_;
  std::shared_ptr<nn::GnnModel> model_;
  // A model that reads its input in place gets the whole feature table and the input nodes as
  // its rows: the loader gathers no copy of them (the biggest tensor of a batch by far).
  at::Tensor feature_table_;
  // The input rows read onto the device by placement (pinned or device-resident); null when
  // the loader gathers them into the batch.
  std::unique_ptr<features::DeviceRows> device_rows_;
  std::unique_ptr<loader::DataLoader> loader_;
  at::Tensor valid_labels_;
  torch::Tensor input_;  // this batch's embedding rows, whose gradient after_step() sends
};

NodeClassificationTask::NodeClassificationTask(const TrainingInputs& inputs,
                                               const TrainOptions& options,
                                               distributed::ProcessGroup* group)
    : inputs_((check_inputs(inputs, options), inputs)),
      options_(options),
      group_(group),
      rows_(*inputs.rows),
      embedding_(inputs.embedding),
      device_(training_device(options, group)),
      device_graph_(placed_graph(inputs, options, device_)),
      sampler_(device_graph_ ? device_graph_.get() : inputs.graph, options.sampler_options()),
      // Nodes already split per trainer (node_split) are this rank's whole item set; temporal
      // items are (node, time) rows.
      items_(options.temporal
                 ? at::stack({inputs.train_nodes, inputs.node_times(inputs.train_nodes)}, 1)
                 : inputs.train_nodes,
             {.batch_size = options.batch_size,
              .shuffle = true,
              .rank = data_parallel(group) && !inputs.train_nodes_split ? group->rank() : 0,
              .world_size =
                  data_parallel(group) && !inputs.train_nodes_split ? group->world_size() : 1,
              .drop_uneven_inputs = options.drop_uneven_inputs,
              .seed = options.seed}),
      input_rows_([this](const at::Tensor& ids) {
        return embedding_ != nullptr ? embedding_->pull(ids) : rows_.gather("feat", ids);
      }),
      model_(make(options)),
      // On a GPU the batch's rows are gathered and copied (the table stays in host memory).
      feature_table_(embedding_ == nullptr && model_->reads_input_table() && device_.is_cpu()
                         ? rows_.whole_table("feat")
                         : at::Tensor()),
      device_rows_(placed_rows(inputs, options, device_)),
      valid_labels_(rows_.gather("label", inputs.valid_nodes)) {
  if (device_rows_) feature_table_ = at::Tensor();
  const bool gather_features =
      embedding_ == nullptr && !feature_table_.defined() && device_rows_ == nullptr;
  loader_ = std::make_unique<loader::DataLoader>(
      loader::Pipeline{.items = &items_,
                       .timed_items = options.temporal,
                       .neighbors = &sampler_,
                       .features = &rows_},
      loader::DataLoaderOptions{.num_workers = options.num_workers,
                                .prefetch = options.prefetch,
                                .feature_names = gather_features ? std::vector<std::string>{"feat"}
                                                                 : std::vector<std::string>{},
                                .pin_memory = device_.is_cuda()});
}

std::shared_ptr<nn::GnnModel> NodeClassificationTask::make(const TrainOptions& options) const {
  nn::ModelConfig config = options.model;
  config.in = embedding_ != nullptr ? embedding_->dim() : rows_.info("feat").row_shape.at(0);
  config.out = inputs_.num_classes;
  config.num_relations = inputs_.num_relations;
  config.layers = static_cast<int64_t>(options.fanouts.size());
  std::shared_ptr<nn::GnnModel> model = nn::make_model(config);
  if (inputs_.in_degrees.defined()) {
    model->set_graph_degrees(inputs_.in_degrees, inputs_.out_degrees);
  }
  model->to(device_);
  return model;
}

at::Tensor NodeClassificationTask::logits(const at::Tensor& nodes) const {
  nn::GnnModel& model = *model_;
  const sampling::NeighborSource& source = *inputs_.graph;
  // A temporal model sees each node's past only: full-neighbor inference would read its future.
  if (options_.eval == EvalMode::kSampled || options_.temporal) {
    return sampled_logits(model, sampler_, input_rows_, nodes, options_.batch_size, group_,
                          inputs_.node_times);
  }
  if (inputs_.layer_outputs) {
    return layerwise_inference(model, source, input_rows_, options_.eval_batch_size,
                               options_.progress, group_, inputs_.layer_outputs)(nodes);
  }
  return layerwise_inference(model, source, input_rows_, options_.eval_batch_size,
                             options_.progress, group_)
      .index_select(0, nodes);
}

StepOutput NodeClassificationTask::step(const sampling::MiniBatch& host_batch,
                                        const sampling::MiniBatch& batch) {
  // Embedding rows are pulled here, as leaves whose gradient goes back to their owners.
  input_ = feature_table_.defined() ? feature_table_
           : device_rows_           ? device_rows_->gather(host_batch.input_nodes())
           : embedding_ != nullptr
               ? embedding_->pull(host_batch.input_nodes()).to(device_).set_requires_grad(true)
               : batch.features.at("feat");
  torch::Tensor logits;
  {
    const AutocastScope autocast(options_.precision, device_);
    logits = full_precision(model_->forward(
        batch.blocks, input_, feature_table_.defined() ? batch.input_nodes() : at::Tensor()));
  }
  StepOutput out;
  out.loss = torch::nn::functional::cross_entropy(
      logits, batch.labels, torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
  out.items = batch.seeds.numel();
  out.sums["train_acc"] =
      static_cast<double>((logits.argmax(1) == batch.labels).sum().item<int64_t>());
  return out;
}

// Sparse: each rank's embedding gradients go to the rows' owners, unaveraged (as DGL).
void NodeClassificationTask::after_step(const sampling::MiniBatch& batch) {
  if (embedding_ != nullptr) embedding_->step(batch.input_nodes(), input_.grad().cpu());
}

Validation NodeClassificationTask::validate() {
  const at::Tensor logits = this->logits(inputs_.valid_nodes);
  Validation validation;
  validation.score = accuracy(logits, valid_labels_);
  validation.fields = {{"val_f1", macro_f1(logits, valid_labels_, inputs_.num_classes)}};
  return validation;
}

void NodeClassificationTask::test() {
  const at::Tensor logits = this->logits(inputs_.test_nodes);
  const at::Tensor test_labels = rows_.gather("label", inputs_.test_nodes);
  test_acc = accuracy(logits, test_labels);
  test_f1 = macro_f1(logits, test_labels, inputs_.num_classes);
  if (inputs_.num_classes == 2) test_auc = binary_roc_auc(logits, test_labels);
}

}  // namespace

TrainResult train_node_classification(const io::Dataset& dataset, const TrainOptions& options,
                                      distributed::ProcessGroup* group) {
  GL_CHECK(dataset.labels.defined() && dataset.num_classes > 0,
           "dataset '{}' has no labels: node classification needs them", dataset.name);
  GL_CHECK(dataset.node_features.count("feat"), "dataset '{}' has no node feature named 'feat'",
           dataset.name);
  for (const char* name : {"train", "valid", "test"}) {
    const auto it = dataset.splits.find(name);
    GL_CHECK(it != dataset.splits.end() && it->second.numel() > 0,
             "dataset '{}' has no '{}' split (node classification needs train, valid and test)",
             dataset.name, name);
  }
  const DatasetInputs inputs(dataset, options, TaskKind::kNodeClassification);
  return train_node_classification(inputs.inputs(), options, group);
}

TrainResult train_node_classification(const TrainingInputs& inputs, const TrainOptions& options,
                                      distributed::ProcessGroup* group) {
  Trainer trainer(options, group, inputs.epoch_counters);
  NodeClassificationTask task(inputs, options, group);
  const FitResult fit = trainer.fit(task);
  TrainResult result;
  result.best_val_acc = fit.best_val;
  result.best_epoch = fit.best_epoch;
  result.test_acc = task.test_acc;
  result.test_f1 = task.test_f1;
  result.test_auc = task.test_auc;
  result.epochs_run = fit.epochs_run;
  result.seeds_per_second = fit.items_per_second;
  result.times = fit.times;
  result.train_seconds = fit.train_seconds;
  result.steps = fit.steps;
  result.parameters = fit.parameters;
  result.loss_scale = fit.loss_scale;
  result.counters = fit.counters;
  add_device_cache_counters(task.device_rows(), options, group, result.counters);
  return result;
}

}  // namespace graphloom::train
