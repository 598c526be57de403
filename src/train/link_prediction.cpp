// The link-prediction loop. A batch's endpoints (sources, destinations, negative destinations)
// are deduplicated into one seed set, so each node is encoded once per batch however many
// pairs it is in; scores are then read off the seed embeddings by position.
#include "graphloom/train/link_prediction.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <array>
#include <filesystem>
#include <optional>
#include <tuple>

#include "graphloom/base/error.h"
#include "graphloom/base/progress.h"
#include "graphloom/base/random.h"
#include "graphloom/base/timer.h"
#include "graphloom/dist/dist_graph.h"
#include "graphloom/graph/link_heuristics.h"
#include "graphloom/nn/models.h"
#include "graphloom/nn/sparse_ops.h"
#include "graphloom/sampling/item_sampler.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/negative_sampler.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/train/checkpoint.h"
#include "graphloom/train/dataset_inputs.h"
#include "graphloom/train/inference.h"
#include "graphloom/train/link_metrics.h"
#include "graphloom/train/link_priors.h"
#include "graphloom/train/link_ranking.h"
#include "graphloom/train/metrics_log.h"
#include "link_model.h"

namespace graphloom::train {
namespace {

constexpr int64_t kDefaultEmbedDim = 64;

const at::Tensor& edge_split(const LinkInputs& inputs, const std::string& name) {
  const auto it = inputs.edge_splits.find(name);
  GL_CHECK(it != inputs.edge_splits.end(),
           "'{}' has no '{}' edge split: link prediction needs train, valid, valid_neg, test and "
           "test_neg (import an lp_* dataset, or `graphloom convert --link-split`)",
           inputs.name, name);
  return it->second;
}

// Scores of `pairs` [M, 2] from every node's embedding.
at::Tensor pair_scores(LinkModel& model, const at::Tensor& embeddings, const at::Tensor& pairs) {
  torch::NoGradGuard no_grad;
  const at::Tensor dst = pairs.select(1, 1).contiguous();
  return model.score(embeddings.index_select(0, pairs.select(1, 0)),
                     embeddings.index_select(0, dst), dst);
}

}  // namespace

LinkResult train_link_prediction(const io::Dataset& dataset, const TrainOptions& options,
                                 const LinkOptions& link, dist::ProcessGroup* group) {
  const graph::CscGraph graph =
      graph_for_model(dataset.graph, options.model.kind, options.self_loops);
  const sampling::LocalNeighborSource source(graph);
  const features::TensorFeatureSource rows = dataset_rows(dataset, options.normalize_features);
  LinkInputs inputs;
  inputs.name = dataset.name;
  inputs.graph = &source;
  inputs.rows = &rows;
  inputs.num_nodes = dataset.num_nodes();
  inputs.edge_splits = dataset.edge_splits;
  if (const auto times = dataset.edge_split_times.find("train");
      times != dataset.edge_split_times.end()) {
    inputs.train_times = times->second;
  }
  inputs.target = link_target(dataset);
  inputs.num_relations = dataset.schema.num_edge_types();
  inputs.in_degrees = graph.in_degrees();
  inputs.out_degrees = graph.out_degrees();
  inputs.whole_graph = &dataset.graph;  // LightGCN and common neighbours: the plain graph
  inputs.typed = !dataset.schema.empty();
  return train_link_prediction(inputs, options, link, group);
}

LinkResult train_link_prediction(const LinkInputs& inputs, const TrainOptions& options,
                                 const LinkOptions& link, dist::ProcessGroup* group) {
  const bool main_rank = !data_parallel(group) || group->rank() == 0;
  const at::Tensor all_train_pairs = edge_split(inputs, "train");
  const at::Tensor valid_pos = edge_split(inputs, "valid");
  const at::Tensor valid_neg = edge_split(inputs, "valid_neg");
  const at::Tensor test_pos = edge_split(inputs, "test");
  const at::Tensor test_neg = edge_split(inputs, "test_neg");
  GL_CHECK(link.negatives >= 1, "--negatives must be >= 1, got {}", link.negatives);
  GL_CHECK(link.loss == "bce" || link.loss == "bpr", "--loss must be bce or bpr, got '{}'",
           link.loss);
  GL_CHECK(options.epochs >= 1, "--epochs must be >= 1, got {}", options.epochs);
  torch::manual_seed(options.seed);

  const sampling::NeighborSource& source = *inputs.graph;
  const bool has_features = inputs.rows != nullptr && inputs.rows->has("feat");
  const bool lightgcn = options.model.kind == "lightgcn";
  GL_CHECK(!lightgcn || inputs.whole_graph != nullptr,
           "LightGCN propagates over the whole graph, which '{}' does not hold in one process "
           "(use an encoder that samples: sage, gcn, gat, rgcn, rsage)",
           inputs.name);
  dist::DistEmbedding* shared_embedding = inputs.embedding;
  // A local embedding table unless the servers hold one (partitioned graphs).
  const int64_t embed_dim = shared_embedding != nullptr   ? 0
                            : link.embed_dim > 0          ? link.embed_dim
                            : (has_features && !lightgcn) ? 0
                                                          : kDefaultEmbedDim;
  nn::ModelConfig config = options.model;
  config.in = shared_embedding != nullptr ? shared_embedding->dim()
              : embed_dim > 0             ? embed_dim
                                          : inputs.rows->info("feat").row_shape.at(0);
  // The node embedding the scorer reads (LightGCN keeps the input width).
  config.out = lightgcn ? embed_dim : options.model.hidden;
  config.layers = static_cast<int64_t>(options.fanouts.size());
  config.num_relations = inputs.num_relations;
  const at::Tensor pair_weights = recency_weights(inputs, link.recency_half_life_days);
  LinkModel model(config, inputs.num_nodes, embed_dim, link.scorer, link.destination_bias,
                  link.popularity_prior
                      ? popularity_prior(all_train_pairs, pair_weights, inputs.num_nodes,
                                         inputs.target.symmetric)
                      : at::Tensor());
  // Nodes without edges in the training graph (cold users of a temporal split) get no gradient
  // ever: a zero embedding makes them the "average" query, ranked by what the model shares
  // across queries (the learned bias, the popularity prior), instead of by the noise of their
  // initialization.
  const bool has_degrees = inputs.in_degrees.defined() && inputs.out_degrees.defined();
  if (model.has_embedding() && has_degrees) {
    model.zero_rows(inputs.in_degrees + inputs.out_degrees == 0);
  }
  // LightGCN propagates over the whole training graph, one "block" of every node.
  nn::BlockView whole;
  at::Tensor edge_norm;
  if (lightgcn) {
    const graph::CscGraph& graph = *inputs.whole_graph;
    whole = {graph.indptr, graph.indices.to(at::kLong), graph.num_nodes,
             at::arange(graph.num_nodes, at::kLong)};
    const at::Tensor out_degree = graph.out_degrees().clamp_min(1).to(at::kFloat);
    const at::Tensor in_degree = graph.in_degrees().clamp_min(1).to(at::kFloat);
    edge_norm = (out_degree.index_select(0, whole.indices) *
                 in_degree.index_select(0, graph.destinations()))
                    .rsqrt();
  } else if (has_degrees) {
    model.encoder().set_graph_degrees(inputs.in_degrees, inputs.out_degrees);
  }
  const RowReader input_rows = [&](const at::Tensor& ids) {
    if (shared_embedding != nullptr) return shared_embedding->pull(ids);
    return model.has_embedding() ? model.embed(ids) : inputs.rows->gather("feat", ids);
  };
  // An encoder that reads its input in place gets the whole feature table: no gathered copy.
  const at::Tensor feature_table = has_features && shared_embedding == nullptr &&
                                           !model.has_embedding() && !lightgcn &&
                                           model.encoder().reads_input_table()
                                       ? inputs.rows->whole_table("feat")
                                       : at::Tensor();
  torch::optim::Adam optimizer(
      model.parameters(), torch::optim::AdamOptions(options.lr).weight_decay(options.weight_decay));
  TrainState state;
  if (options.resume) {
    load_checkpoint(options.checkpoint, model, optimizer, state);
    if (main_rank) {
      spdlog::info("resumed from '{}' after epoch {}", options.checkpoint.string(), state.epoch);
    }
  }
  // Data-parallel: each rank trains on its share of the training pairs (edge_split), the
  // gradients of every parameter (the input embedding included) are averaged.
  std::optional<GradientSynchronizer> sync;
  if (data_parallel(group)) {
    sync.emplace(model.parameters(), *group, options.sync);
    sync->broadcast_parameters(0);
  }
  int64_t steps = 0;
  const auto after_step = [&] {  // --check-sync: replicas must stay bitwise identical
    ++steps;
    if (sync && options.check_sync_every > 0 && steps % options.check_sync_every == 0) {
      sync->check_parameters_in_sync(steps);
    }
  };

  const sampling::NeighborSampler sampler(&source, {.fanouts = options.fanouts,
                                                    .edge_type_fanouts = options.edge_type_fanouts,
                                                    .seed = options.seed,
                                                    .edge_ids = false});
  // This rank's training pairs: given (edge_split on partitions), or a rank split of all.
  const bool split_here = data_parallel(group) && !inputs.train_rows.defined();
  const auto share = [&](const at::Tensor& all) {
    return inputs.train_rows.defined() && all.defined() ? all.index_select(0, inputs.train_rows)
                                                        : all;
  };
  const sampling::ItemSampler items(share(all_train_pairs),
                                    {.batch_size = options.batch_size,
                                     .shuffle = true,
                                     .rank = split_here ? group->rank() : 0,
                                     .world_size = split_here ? group->world_size() : 1,
                                     .seed = options.seed,
                                     .weights = share(pair_weights)});
  std::unique_ptr<sampling::NegativeSampler> negatives;
  // Negatives are candidates of the target: nodes of the destination type on typed graphs.
  const LinkTarget& target = inputs.target;
  if (main_rank) spdlog::info("link prediction target: {}", target.description);
  if (link.negative_sampler == "degree") {
    GL_CHECK(inputs.in_degrees.defined(), "--negative-sampler degree needs the graph's degrees");
    at::Tensor degrees = at::zeros({inputs.num_nodes}, at::kLong);
    degrees.index_put_({target.candidates}, inputs.in_degrees.index_select(0, target.candidates));
    negatives = std::make_unique<sampling::DegreeNegativeSampler>(degrees);
  } else {
    GL_CHECK(link.negative_sampler == "uniform",
             "--negative-sampler must be uniform or degree, got '{}'", link.negative_sampler);
    negatives = std::make_unique<sampling::UniformNegativeSampler>(target.candidates);
  }
  auto embed_all = [&] {
    if (lightgcn) {
      torch::NoGradGuard no_grad;
      return model.propagate(whole, edge_norm);
    }
    if (inputs.layer_outputs) {
      const RowReader last =
          layerwise_inference(model.encoder(), source, input_rows, options.eval_batch_size,
                              options.progress, group, inputs.layer_outputs);
      return last(at::arange(source.num_nodes(), at::kLong));
    }
    return layerwise_inference(model.encoder(), source, input_rows, options.eval_batch_size,
                               options.progress, group);
  };

  LinkResult result;
  MetricsLog log(main_rank ? options.metrics_log : std::filesystem::path(),
                 /*append=*/options.resume);
  const uint64_t rank = data_parallel(group) ? static_cast<uint64_t>(group->rank()) : 0;
  double train_seconds = 0;
  int64_t edges_seen = 0;
  for (int64_t epoch = state.epoch + 1; epoch < options.epochs; ++epoch) {
    model.train();
    const std::vector<at::Tensor> batches = items.batches(static_cast<uint64_t>(epoch));
    std::optional<ProgressBar> progress;
    if (options.progress && main_rank) {
      progress.emplace(fmt::format("epoch {}/{}", epoch + 1, options.epochs),
                       static_cast<int64_t>(batches.size()), "batches");
    }
    Timer epoch_timer;
    double loss_sum = 0;
    int64_t seen = 0;
    for (std::size_t b = 0; b < batches.size(); ++b) {
      const at::Tensor src = batches[b].select(1, 0).contiguous();
      const at::Tensor dst = batches[b].select(1, 1).contiguous();
      const int64_t count = src.numel();
      const sampling::NegativeEdges corrupted =
          negatives->sample(src, dst, link.negatives,
                            stream_key({options.seed, static_cast<uint64_t>(epoch), b, rank}));
      const at::Tensor nodes = at::cat({src, dst, corrupted.dst});
      torch::Tensor h;  // rows of the batch's nodes, found at `position`
      torch::Tensor x;  // the encoder's input rows (of input_nodes)
      at::Tensor input_nodes;
      at::Tensor position = nodes;
      if (lightgcn) {
        h = model.propagate(whole, edge_norm);
      } else {
        at::Tensor seeds;
        std::tie(seeds, position) = at::_unique(nodes, /*sorted=*/true, /*return_inverse=*/true);
        const sampling::MiniBatch batch = sampler.sample(seeds, static_cast<uint64_t>(epoch), b);
        input_nodes = batch.input_nodes();
        if (feature_table.defined()) {
          h = model.encoder().forward(batch.blocks, feature_table, input_nodes);
        } else {
          x = input_rows(input_nodes);
          if (shared_embedding != nullptr) x.set_requires_grad(true);
          h = model.encoder().forward(batch.blocks, x);
        }
      }
      const torch::Tensor h_src = h.index_select(0, position.slice(0, 0, count));
      const torch::Tensor positive =
          model.score(h_src, h.index_select(0, position.slice(0, count, 2 * count)), dst);
      const torch::Tensor negative =
          model.score(h_src.repeat_interleave(link.negatives, 0),
                      h.index_select(0, position.slice(0, 2 * count)), corrupted.dst);
      torch::Tensor loss;
      if (link.loss == "bce") {
        loss = torch::binary_cross_entropy_with_logits(
            torch::cat({positive, negative}),
            torch::cat({torch::ones_like(positive), torch::zeros_like(negative)}));
      } else {  // BPR: each positive above each of its negatives
        loss = -torch::log_sigmoid(positive.repeat_interleave(link.negatives, 0) - negative).mean();
      }
      optimizer.zero_grad();
      loss.backward();
      if (sync) sync->synchronize();
      optimizer.step();
      // Sparse: each rank's embedding gradients go to the rows' owners (as node classification).
      if (shared_embedding != nullptr) shared_embedding->step(input_nodes, x.grad());
      after_step();
      loss_sum += loss.item<double>() * static_cast<double>(count);
      seen += count;
      if (progress) {
        progress->set_status(fmt::format("loss {:.4f}", loss.item<double>()));
        progress->advance(1, count);
      }
    }
    if (progress) progress->finish();
    if (sync) {  // Join: shadow the others' steps until every rank is out of pairs
      while (sync->join() > 0) {
        optimizer.step();
        after_step();
      }
    }
    const double seconds = epoch_timer.seconds();
    train_seconds += seconds;
    edges_seen += seen;
    ++result.epochs_run;
    nlohmann::json record = {{"epoch", epoch},
                             {"loss", loss_sum / static_cast<double>(std::max<int64_t>(seen, 1))},
                             {"edges_per_s", static_cast<double>(seen) / seconds},
                             {"time", {{"train", seconds}}}};
    const bool last = epoch + 1 == options.epochs;
    bool stop = false;
    if (options.eval_every > 0 && ((epoch + 1) % options.eval_every == 0 || last)) {
      const at::Tensor embeddings = embed_all();
      const double val_auc = roc_auc(pair_scores(model, embeddings, valid_pos),
                                     pair_scores(model, embeddings, valid_neg));
      record["val_auc"] = val_auc;
      stop = state.record_validation(val_auc, epoch, model, options.eval_every, options.patience);
    }
    stop = rank0_decides(stop, group);
    state.epoch = epoch;
    log.write(record);
    if (main_rank) {
      spdlog::info("epoch {:>3}  loss {:.4f}{}  {:.0f} edges/s", epoch + 1,
                   record["loss"].get<double>(),
                   record.contains("val_auc")
                       ? fmt::format("  val AUC {:.4f}", record["val_auc"].get<double>())
                       : "",
                   record["edges_per_s"].get<double>());
    }
    if (main_rank && !options.checkpoint.empty()) {
      save_checkpoint(options.checkpoint, model, optimizer, state);
    }
    if (stop) {
      if (main_rank) {
        spdlog::info("early stopping: no better validation AUC for {} epochs", options.patience);
      }
      break;
    }
  }
  result.best_val_auc = state.best_val;
  result.best_epoch = state.best_epoch;
  result.edges_per_second = train_seconds > 0 ? static_cast<double>(edges_seen) / train_seconds : 0;
  if (options.final_test) {
    if (!state.best_parameters.empty()) restore_parameters(model, state.best_parameters);
    const at::Tensor embeddings = embed_all();
    const at::Tensor positive = pair_scores(model, embeddings, test_pos);
    const at::Tensor negative = pair_scores(model, embeddings, test_neg);
    result.test_auc = roc_auc(positive, negative);
    result.test_hits = hits_at_k(positive, negative, link.hits_k);
    result.test_mrr = mean_reciprocal_rank(positive, negative);
    // Typed pairs join different node types: they share no neighbours.
    if (inputs.whole_graph != nullptr && !inputs.typed) {
      result.test_common_neighbors_auc =
          roc_auc(graph::common_neighbor_counts(*inputs.whole_graph, test_pos),
                  graph::common_neighbor_counts(*inputs.whole_graph, test_neg));
    }
    const PairScorer scorer = [&](const at::Tensor& u, const at::Tensor& v,
                                  const at::Tensor& v_ids) {
      torch::NoGradGuard no_grad;
      return model.score(u, v, v_ids);
    };
    result.ranking = full_ranking(scorer, embeddings, inputs.edge_splits, target, pair_weights);
    result.ranking_candidates = target.candidates.numel();
  }
  return result;
}

}  // namespace graphloom::train
