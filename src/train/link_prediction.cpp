// Link prediction as a train::Task. The loader's pair stage draws each batch's negatives and
// deduplicates its endpoints into one seed set, so each node is encoded once per batch however
// many pairs it is in; scores are read off the seed embeddings by position. Validation is the
// AUC of held-out pairs on embeddings of every node; the test adds Hits@K, MRR and full ranking.
// Temporal runs (temporal_link.h) sample every pair, held-out ones too, just before its time.
#include "graphloom/train/link_prediction.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "device_placement.h"
#include "eval_mode.h"
#include "graphloom/base/error.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/graph/link_heuristics.h"
#include "graphloom/nn/models.h"
#include "graphloom/nn/sparse_ops.h"
#include "graphloom/sampling/item_sampler.h"
#include "graphloom/sampling/negative_sampler.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/train/dataset_inputs.h"
#include "graphloom/train/inference.h"
#include "graphloom/train/link_metrics.h"
#include "graphloom/train/link_priors.h"
#include "graphloom/train/link_ranking.h"
#include "graphloom/train/trainer.h"
#include "link_model.h"
#include "link_scores.h"
#include "temporal_link.h"

namespace graphloom::train {
namespace {

// Edge split `name` of graph `graph_name`, or an error saying what link prediction needs.
const at::Tensor& edge_split(const std::map<std::string, at::Tensor>& splits,
                             const std::string& graph_name, const std::string& name) {
  const auto it = splits.find(name);
  GL_CHECK(it != splits.end(),
           "'{}' has no '{}' edge split: link prediction needs train, valid, valid_neg, test and "
           "test_neg (import an lp_* dataset, or `graphloom convert --link-split`)",
           graph_name, name);
  return it->second;
}

const at::Tensor& edge_split(const TrainingInputs& inputs, const std::string& name) {
  return edge_split(inputs.edge_splits, inputs.name, name);
}

// The width of a local embedding table as the encoder's input; 0: none (the servers hold a
// DistEmbedding, or the "feat" rows are the input).
int64_t local_embed_dim(const TrainingInputs& inputs, const LinkOptions& link, bool lightgcn) {
  const bool has_features = inputs.rows != nullptr && inputs.rows->has("feat");
  if (inputs.embedding != nullptr) return 0;
  if (link.embed_dim > 0) return link.embed_dim;
  return has_features && !lightgcn ? 0 : kFeaturelessEmbedDim;
}

// Negatives are candidates of the target: nodes of the destination type on typed graphs.
std::unique_ptr<sampling::NegativeSampler> make_negative_sampler(const TrainingInputs& inputs,
                                                                 const LinkOptions& link) {
  const LinkTarget& target = inputs.target;
  if (link.negative_sampler == NegativeSampling::kDegree) {
    if (!inputs.in_degrees.defined()) {
      throw OptionError("negative_sampler", "degree needs the graph's degrees");
    }
    at::Tensor degrees = at::zeros({inputs.num_nodes}, at::kLong);
    degrees.index_put_({target.candidates}, inputs.in_degrees.index_select(0, target.candidates));
    return std::make_unique<sampling::DegreeNegativeSampler>(degrees);
  }
  return std::make_unique<sampling::UniformNegativeSampler>(target.candidates);
}

class LinkPredictionTask : public Task {
 public:
  LinkPredictionTask(const TrainingInputs& inputs, const TrainOptions& options,
                     const LinkOptions& link, distributed::ProcessGroup* group);

  const TaskNames& names() const override { return names_; }
  torch::nn::Module& model() override { return *model_; }
  loader::DataLoader& loader() override { return *loader_; }
  StepOutput step(const sampling::MiniBatch& host_batch, const sampling::MiniBatch& batch) override;
  void after_step(const sampling::MiniBatch& batch) override;
  std::map<std::string, torch::Tensor> external_state() override {
    return shared_embedding_ != nullptr ? shared_embedding_->state()
                                        : std::map<std::string, torch::Tensor>{};
  }
  void restore_external_state(const std::map<std::string, torch::Tensor>& state) override {
    if (shared_embedding_ != nullptr) shared_embedding_->load_state(state);
  }
  Validation validate() override;
  void test() override;

  LinkResult figures;  // the test's
  const features::DeviceRows* device_rows() const { return device_rows_.get(); }

 private:
  std::shared_ptr<LinkModel> make(int64_t embed_dim) const;
  void prepare_encoder();
  void make_loader(int64_t embed_dim);
  // The rows of the batch's seeds; `batch` is on the training device, `host_input_nodes` its
  // input nodes on the host (placed rows are read by them).
  torch::Tensor encode(const sampling::MiniBatch& batch, const at::Tensor& host_input_nodes);
  at::Tensor embed_all();
  // Scores of edge split `name`: from `embeddings` of every node, or (temporal) each pair
  // encoded from blocks sampled just before its time.
  at::Tensor split_scores(const std::string& name, const at::Tensor& embeddings);
  // Scores of a host batch's pairs, without gradients (temporal evaluation).
  at::Tensor score_batch(const sampling::MiniBatch& host_batch);

  const TaskNames names_{.items = "edges",
                         .validation_key = "val_auc",
                         .validation = "val AUC",
                         .score = "validation AUC",
                         .train_metrics = {}};
  const TrainingInputs& inputs_;
  const TrainOptions& options_;
  const LinkOptions& link_;
  distributed::ProcessGroup* group_;
  const bool lightgcn_;
  distributed::DistEmbedding* shared_embedding_;  // input rows on the servers, or null
  const at::Tensor train_pairs_;                  // all of them
  const at::Tensor pair_weights_;                 // their recency weights, or undefined
  c10::Device device_;
  // graph_placement device: the training graph on the device, sampled there.
  std::unique_ptr<sampling::TensorNeighborSource> device_graph_;
  std::shared_ptr<LinkModel> model_;
  // LightGCN propagates over the whole training graph, one "block" of every node.
  nn::BlockView whole_;
  at::Tensor edge_norm_;
  RowReader input_rows_;
  // An encoder that reads its input in place gets the whole feature table: no gathered copy.
  at::Tensor feature_table_;
  // The input rows read onto the device by placement (pinned, device-resident or cached); null
  // when the loader gathers them into the batch.
  std::unique_ptr<features::DeviceRows> device_rows_;
  sampling::NeighborSampler sampler_;
  std::unique_ptr<sampling::ItemSampler> items_;
  std::unique_ptr<sampling::NegativeSampler> negatives_;
  std::unique_ptr<loader::DataLoader> loader_;
  PairScoring scoring_;  // temporal evaluation's batches, built as the training batches are
  torch::Tensor input_;  // this batch's DistEmbedding rows, whose gradient after_step() sends
};

LinkPredictionTask::LinkPredictionTask(const TrainingInputs& inputs, const TrainOptions& options,
                                       const LinkOptions& link, distributed::ProcessGroup* group)
    : inputs_(inputs),
      options_(options),
      link_((link.validate(), link)),
      group_(group),
      lightgcn_(options.model.kind == nn::ModelKind::kLightGcn),
      shared_embedding_(inputs.embedding),
      train_pairs_(edge_split(inputs, "train")),
      pair_weights_(recency_weights(inputs, link.recency_half_life_days)),
      device_(training_device(options, group)),
      // LightGCN samples nothing: it propagates over the whole graph.
      device_graph_(lightgcn_ ? nullptr : placed_graph(inputs, options, device_)),
      sampler_(device_graph_ ? device_graph_.get() : inputs.graph, options.sampler_options()) {
  for (const char* name : {"valid", "valid_neg", "test", "test_neg"}) edge_split(inputs, name);
  if (options.temporal) {
    if (lightgcn_) {
      throw OptionError("temporal",
                        "samples each pair's past, and LightGCN samples nothing (use "
                        "an encoder that samples: sage, gcn, gat, rgcn, rsage)");
    }
    for (const char* name : {"train", "valid", "valid_neg", "test", "test_neg"}) {
      split_times(inputs, name);  // fails now, not after the first epoch
    }
  }
  GL_CHECK(!lightgcn_ || inputs.whole_graph != nullptr,
           "LightGCN propagates over the whole graph, which '{}' does not hold in one process "
           "(use an encoder that samples: sage, gcn, gat, rgcn, rsage)",
           inputs.name);
  const int64_t embed_dim = local_embed_dim(inputs, link, lightgcn_);
  model_ = make(embed_dim);
  prepare_encoder();
  input_rows_ = [this](const at::Tensor& ids) {
    if (shared_embedding_ != nullptr) return shared_embedding_->pull(ids);
    return model_->has_embedding() ? model_->embed(ids.to(device_))
                                   : inputs_.rows->gather("feat", ids);
  };
  const bool has_features = inputs.rows != nullptr && inputs.rows->has("feat");
  const bool reads_features =
      has_features && shared_embedding_ == nullptr && !model_->has_embedding() && !lightgcn_;
  if (reads_features) device_rows_ = placed_rows(inputs, options, device_);
  // On a GPU the batch's rows are gathered and copied (the table stays in host memory).
  if (reads_features && device_rows_ == nullptr && device_.is_cpu() &&
      model_->encoder().reads_input_table()) {
    feature_table_ = inputs.rows->whole_table("feat");
  }
  make_loader(embed_dim);
  if (!data_parallel(group) || group->rank() == 0) {
    spdlog::info("link prediction target: {}", inputs.target.description);
  }
}

std::shared_ptr<LinkModel> LinkPredictionTask::make(int64_t embed_dim) const {
  nn::ModelConfig config = options_.model;
  config.in = shared_embedding_ != nullptr ? shared_embedding_->dim()
              : embed_dim > 0              ? embed_dim
                                           : inputs_.rows->info("feat").row_shape.at(0);
  // The node embedding the scorer reads (LightGCN keeps the input width).
  config.out = lightgcn_ ? embed_dim : options_.model.hidden;
  config.layers = static_cast<int64_t>(options_.fanouts.size());
  config.num_relations = inputs_.num_relations;
  return std::make_shared<LinkModel>(
      config, inputs_.num_nodes, embed_dim, link_.scorer, link_.destination_bias,
      link_.popularity_prior ? popularity_prior(train_pairs_, pair_weights_, inputs_.num_nodes,
                                                inputs_.target.symmetric)
                             : at::Tensor());
}

// Degrees, cold rows, LightGCN's whole-graph block; the model on the training device.
void LinkPredictionTask::prepare_encoder() {
  model_->place(device_);
  // Nodes without edges in the training graph (cold users of a temporal split) get no gradient
  // ever: a zero embedding makes them the "average" query, ranked by what the model shares
  // across queries (the learned bias, the popularity prior), instead of by the noise of their
  // initialization.
  const bool has_degrees = inputs_.in_degrees.defined() && inputs_.out_degrees.defined();
  if (model_->has_embedding() && has_degrees) {
    model_->zero_rows(inputs_.in_degrees + inputs_.out_degrees == 0);
  }
  if (lightgcn_) {
    const graph::CscGraph& graph = *inputs_.whole_graph;
    const at::Tensor indices = graph.indices.to(at::kLong);
    const at::Tensor out_degree = graph.out_degrees().clamp_min(1).to(at::kFloat);
    const at::Tensor in_degree = graph.in_degrees().clamp_min(1).to(at::kFloat);
    edge_norm_ =
        (out_degree.index_select(0, indices) * in_degree.index_select(0, graph.destinations()))
            .rsqrt()
            .to(device_);
    whole_ = {graph.indptr.to(device_), indices.to(device_), graph.num_nodes,
              at::arange(graph.num_nodes, at::TensorOptions(at::kLong).device(device_))};
  } else if (has_degrees) {
    model_->encoder().set_graph_degrees(inputs_.in_degrees, inputs_.out_degrees);
  }
}

// items (this rank's training pairs) -> negatives -> blocks -> "feat" rows.
void LinkPredictionTask::make_loader(int64_t embed_dim) {
  // This rank's training pairs: given (edge_split on partitions), or a rank split of all.
  const bool split_here = data_parallel(group_) && !inputs_.train_rows.defined();
  const auto share = [&](const at::Tensor& all) {
    return inputs_.train_rows.defined() && all.defined() ? all.index_select(0, inputs_.train_rows)
                                                         : all;
  };
  // Temporal items are (src, dst, time) rows, each pair sampled just before its time.
  const at::Tensor items =
      options_.temporal
          ? at::cat({train_pairs_, sampled_before(split_times(inputs_, "train")).unsqueeze(1)}, 1)
          : train_pairs_;
  items_ = std::make_unique<sampling::ItemSampler>(
      share(items),
      sampling::ItemSamplerOptions{.batch_size = options_.batch_size,
                                   .shuffle = true,
                                   .rank = split_here ? group_->rank() : 0,
                                   .world_size = split_here ? group_->world_size() : 1,
                                   .seed = options_.seed,
                                   .weights = share(pair_weights_)});
  negatives_ = make_negative_sampler(inputs_, link_);
  const bool gather_features = shared_embedding_ == nullptr && embed_dim == 0 && !lightgcn_ &&
                               !feature_table_.defined() && device_rows_ == nullptr;
  loader_ = std::make_unique<loader::DataLoader>(
      loader::Pipeline{
          .items = items_.get(),
          .negatives = negatives_.get(),
          .negatives_per_pair = link_.negatives,
          .negative_seed = options_.seed,
          .negative_stream = data_parallel(group_) ? static_cast<uint64_t>(group_->rank()) : 0,
          .timed_items = options_.temporal,
          .neighbors = lightgcn_ ? nullptr : &sampler_,
          .features = inputs_.rows},
      loader::DataLoaderOptions{.num_workers = options_.num_workers,
                                .prefetch = options_.prefetch,
                                .feature_names = gather_features ? std::vector<std::string>{"feat"}
                                                                 : std::vector<std::string>{},
                                .label_name = "",
                                .pin_memory = device_.is_cuda()});
  scoring_ = {.sampler = &sampler_,
              .features = inputs_.rows,
              .feature_names =
                  gather_features ? std::vector<std::string>{"feat"} : std::vector<std::string>{},
              .batch_size = options_.batch_size,
              .num_workers = options_.num_workers,
              .prefetch = options_.prefetch,
              .group = group_};
}

torch::Tensor LinkPredictionTask::encode(const sampling::MiniBatch& batch,
                                         const at::Tensor& host_input_nodes) {
  if (lightgcn_) return model_->propagate(whole_, edge_norm_).index_select(0, batch.seeds);
  const at::Tensor& input_nodes = batch.input_nodes();
  if (feature_table_.defined()) {
    return model_->encoder().forward(batch.blocks, feature_table_, input_nodes);
  }
  const auto gathered = batch.features.find("feat");
  input_ =
      device_rows_ ? device_rows_->gather(host_input_nodes)
      : gathered != batch.features.end()
          ? gathered->second
          // DistEmbedding rows are pulled by host ids; a local
          // table reads the device's.
          : input_rows_(shared_embedding_ != nullptr ? host_input_nodes : input_nodes).to(device_);
  if (shared_embedding_ != nullptr) input_.set_requires_grad(true);
  return model_->encoder().forward(batch.blocks, input_);
}

StepOutput LinkPredictionTask::step(const sampling::MiniBatch& host_batch,
                                    const sampling::MiniBatch& batch) {
  const sampling::PairBatch& pairs = batch.pairs;
  const int64_t count = pairs.num_pairs();
  torch::Tensor positive;
  torch::Tensor negative;
  {
    const AutocastScope autocast(options_.precision, device_);
    const torch::Tensor h = encode(batch, host_batch.input_nodes());
    const at::Tensor& position = pairs.position;
    const torch::Tensor h_src = h.index_select(0, position.slice(0, 0, count));
    positive = nn::full_precision(
        model_->score(h_src, h.index_select(0, position.slice(0, count, 2 * count)), pairs.dst));
    negative = nn::full_precision(model_->score(h_src.repeat_interleave(link_.negatives, 0),
                                                h.index_select(0, position.slice(0, 2 * count)),
                                                pairs.negative_dst));
  }
  StepOutput out;
  if (link_.loss == LinkLoss::kBce) {
    out.loss = torch::binary_cross_entropy_with_logits(
        torch::cat({positive, negative}),
        torch::cat({torch::ones_like(positive), torch::zeros_like(negative)}));
  } else {  // BPR: each positive above each of its negatives
    out.loss =
        -torch::log_sigmoid(positive.repeat_interleave(link_.negatives, 0) - negative).mean();
  }
  out.items = count;
  return out;
}

// Sparse: each rank's embedding gradients go to the rows' owners (as node classification).
void LinkPredictionTask::after_step(const sampling::MiniBatch& batch) {
  if (shared_embedding_ != nullptr) {
    shared_embedding_->step(batch.input_nodes(), input_.grad().cpu());
  }
}

// Every node's embedding (collective: layer-wise inference is split over the ranks).
at::Tensor LinkPredictionTask::embed_all() {
  if (lightgcn_) {
    torch::NoGradGuard no_grad;
    return model_->propagate(whole_, edge_norm_).cpu();
  }
  const sampling::NeighborSource& source = *inputs_.graph;
  if (inputs_.layer_outputs) {
    const RowReader last =
        layerwise_inference(model_->encoder(), source, input_rows_, options_.eval_batch_size,
                            options_.progress, group_, inputs_.layer_outputs);
    return last(at::arange(source.num_nodes(), at::kLong));
  }
  return layerwise_inference(model_->encoder(), source, input_rows_, options_.eval_batch_size,
                             options_.progress, group_);
}

at::Tensor LinkPredictionTask::score_batch(const sampling::MiniBatch& host_batch) {
  torch::NoGradGuard no_grad;
  const sampling::MiniBatch batch = sampling::to_device(host_batch, device_);
  const AutocastScope autocast(options_.precision, device_);
  const torch::Tensor h = encode(batch, host_batch.input_nodes());
  const int64_t count = batch.pairs.num_pairs();
  const at::Tensor& position = batch.pairs.position;
  return nn::full_precision(model_->score(h.index_select(0, position.slice(0, 0, count)),
                                          h.index_select(0, position.slice(0, count, 2 * count)),
                                          batch.pairs.dst))
      .cpu();
}

at::Tensor LinkPredictionTask::split_scores(const std::string& name, const at::Tensor& embeddings) {
  const at::Tensor& pairs = edge_split(inputs_, name);
  if (!options_.temporal) return pair_scores(*model_, embeddings, pairs);
  const EvalModeScope eval(*model_);
  return scores_at_pair_times(
      pairs, split_times(inputs_, name), scoring_,
      [this](const sampling::MiniBatch& host_batch) { return score_batch(host_batch); });
}

Validation LinkPredictionTask::validate() {
  // Temporal runs sample each pair at its time instead of embedding every node.
  const at::Tensor embeddings = options_.temporal ? at::Tensor() : embed_all();
  Validation validation;
  validation.score =
      roc_auc(split_scores("valid", embeddings), split_scores("valid_neg", embeddings));
  return validation;
}

void LinkPredictionTask::test() {
  // Full ranking scores every candidate for every query from one embedding of each node: with
  // temporal sampling too, that of the whole training graph (every training edge usable).
  const at::Tensor embeddings = embed_all();
  const at::Tensor& test_pos = edge_split(inputs_, "test");
  const at::Tensor& test_neg = edge_split(inputs_, "test_neg");
  const at::Tensor positive = split_scores("test", embeddings);
  const at::Tensor negative = split_scores("test_neg", embeddings);
  figures.test_auc = roc_auc(positive, negative);
  figures.test_hits = hits_at_k(positive, negative, link_.hits_k);
  figures.test_mrr = mean_reciprocal_rank(positive, negative);
  // Typed pairs join different node types: they share no neighbours.
  if (inputs_.whole_graph != nullptr && !inputs_.typed) {
    figures.test_common_neighbors_auc =
        roc_auc(graph::common_neighbor_counts(*inputs_.whole_graph, test_pos),
                graph::common_neighbor_counts(*inputs_.whole_graph, test_neg));
  }
  const PairScorer scorer = [&](const at::Tensor& u, const at::Tensor& v, const at::Tensor& v_ids) {
    return scores_of_rows(*model_, u, v, v_ids);
  };
  figures.ranking =
      full_ranking(scorer, embeddings, inputs_.edge_splits, inputs_.target, pair_weights_);
  figures.ranking_candidates = inputs_.target.candidates.numel();
}

}  // namespace

void LinkOptions::validate() const {
  if (negatives < 1) throw OptionError("negatives", fmt::format("must be >= 1, got {}", negatives));
  if (embed_dim < 0) throw OptionError("embed_dim", fmt::format("must be >= 0, got {}", embed_dim));
  if (hits_k < 1) throw OptionError("hits_k", fmt::format("must be >= 1, got {}", hits_k));
  if (recency_half_life_days < 0) {
    throw OptionError("recency_half_life_days",
                      fmt::format("must be >= 0 days (0: off), got {}", recency_half_life_days));
  }
}

LinkResult train_link_prediction(const io::Dataset& dataset, const TrainOptions& options,
                                 const LinkOptions& link, distributed::ProcessGroup* group) {
  edge_split(dataset.edge_splits, dataset.name, "train");  // before link_target reads them
  const DatasetInputs inputs(dataset, options, TaskKind::kLinkPrediction);
  return train_link_prediction(inputs.inputs(), options, link, group);
}

LinkResult train_link_prediction(const TrainingInputs& inputs, const TrainOptions& options,
                                 const LinkOptions& link, distributed::ProcessGroup* group) {
  Trainer trainer(options, group, inputs.epoch_counters);
  LinkPredictionTask task(inputs, options, link, group);
  const FitResult fit = trainer.fit(task);
  LinkResult result = task.figures;
  result.best_val_auc = fit.best_val;
  result.best_epoch = fit.best_epoch;
  result.epochs_run = fit.epochs_run;
  result.edges_per_second = fit.items_per_second;
  result.times = fit.times;
  result.counters = fit.counters;
  add_device_cache_counters(task.device_rows(), options, group, result.counters);
  return result;
}

}  // namespace graphloom::train
