// The node-classification loop: loader -> model -> loss -> Adam, with validation, early
// stopping, checkpoints, a metrics log and a final test of the best model.
#include "graphloom/train/node_classification.h"

#include <ATen/autocast_mode.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/base/progress.h"
#include "graphloom/base/timer.h"
#include "graphloom/dist/dist_graph.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/graph/transforms.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/nn/models.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/train/checkpoint.h"
#include "graphloom/train/dataset_inputs.h"
#include "graphloom/train/gradient_sync.h"
#include "graphloom/train/inference.h"
#include "graphloom/train/metrics.h"
#include "graphloom/train/metrics_log.h"

namespace graphloom::train {
namespace {

const at::Tensor& split(const io::Dataset& dataset, const std::string& name) {
  const auto it = dataset.splits.find(name);
  GL_CHECK(it != dataset.splits.end() && it->second.numel() > 0,
           "dataset '{}' has no '{}' split (node classification needs train, valid and test)",
           dataset.name, name);
  return it->second;
}

// bfloat16 autocast of the dense layers on CPU while it lives (thread-local, as autocast is);
// the sparse kernels widen their inputs back to float32.
class AutocastScope {
 public:
  explicit AutocastScope(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, true);
  }
  ~AutocastScope() {
    if (!enabled_) return;
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
};

using nn::full_precision;

// Logits of `nodes` from mini-batches sampled with the training fanouts. Data-parallel: each
// rank computes its share and the disjoint shares are summed into the whole on every rank.
using InputRows = RowReader;

at::Tensor sampled_logits(nn::GnnModel& model, const sampling::NeighborSampler& sampler,
                          const InputRows& input_rows, const at::Tensor& nodes, int64_t batch_size,
                          dist::ProcessGroup* group) {
  torch::NoGradGuard no_grad;
  model.eval();
  const int64_t n = nodes.numel();
  const auto [first, last] = data_parallel(group)
                                 ? dist::rank_share(n, group->rank(), group->world_size())
                                 : std::pair{0L, n};
  at::Tensor out = at::zeros({n, model.output_dim(model.num_layers() - 1)}, at::kFloat);
  for (int64_t begin = first; begin < last; begin += batch_size) {
    const int64_t end = std::min(last, begin + batch_size);
    const sampling::MiniBatch batch = sampler.sample(nodes.slice(0, begin, end), ~0ULL, begin);
    out.slice(0, begin, end).copy_(model.forward(batch.blocks, input_rows(batch.input_nodes())));
  }
  if (data_parallel(group)) group->allreduce(out);
  model.train();
  return out;
}

// Sums `values` over the ranks (in place; a no-op for a single process).
void reduce_sums(std::vector<double>& values, dist::ProcessGroup* group) {
  if (!data_parallel(group)) return;
  at::Tensor sums = at::tensor(values, at::kDouble);
  group->allreduce(sums);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = sums[i].item<double>();
}

struct Evaluator {
  nn::GnnModel& model;
  const sampling::NeighborSource& source;
  const sampling::NeighborSampler& sampler;
  const InputRows& input_rows;
  const TrainOptions& options;
  dist::ProcessGroup* group;
  const LayerOutputFactory& layer_outputs;

  // Logits of each requested split.
  std::vector<at::Tensor> logits(const std::vector<at::Tensor>& node_sets) const {
    std::vector<at::Tensor> out;
    if (options.eval == "full" && layer_outputs) {
      const RowReader last = layerwise_inference(model, source, input_rows, options.eval_batch_size,
                                                 options.progress, group, layer_outputs);
      for (const auto& nodes : node_sets) out.push_back(last(nodes));
    } else if (options.eval == "full") {
      const at::Tensor all = layerwise_inference(model, source, input_rows, options.eval_batch_size,
                                                 options.progress, group);
      for (const auto& nodes : node_sets) out.push_back(all.index_select(0, nodes));
    } else {
      for (const auto& nodes : node_sets) {
        out.push_back(sampled_logits(model, sampler, input_rows, nodes, options.batch_size, group));
      }
    }
    return out;
  }
};

}  // namespace

TrainResult train_node_classification(const io::Dataset& dataset, const TrainOptions& options,
                                      dist::ProcessGroup* group) {
  GL_CHECK(dataset.labels.defined() && dataset.num_classes > 0,
           "dataset '{}' has no labels: node classification needs them", dataset.name);
  GL_CHECK(dataset.node_features.count("feat"), "dataset '{}' has no node feature named 'feat'",
           dataset.name);
  const graph::CscGraph graph =
      graph_for_model(dataset.graph, options.model.kind, options.self_loops);
  const sampling::LocalNeighborSource source(graph);
  const features::TensorFeatureSource rows = dataset_rows(dataset, options.normalize_features);
  TrainingInputs inputs;
  inputs.name = dataset.name;
  inputs.graph = &source;
  inputs.rows = &rows;
  inputs.train_nodes = split(dataset, "train");
  inputs.valid_nodes = split(dataset, "valid");
  inputs.test_nodes = split(dataset, "test");
  inputs.num_classes = dataset.num_classes;
  inputs.num_relations = dataset.schema.num_edge_types();
  inputs.in_degrees = graph.in_degrees();
  inputs.out_degrees = graph.out_degrees();
  return train_node_classification(inputs, options, group);
}

TrainResult train_node_classification(const TrainingInputs& inputs, const TrainOptions& options,
                                      dist::ProcessGroup* group) {
  const bool main_rank = !data_parallel(group) || group->rank() == 0;
  GL_CHECK(options.eval == "full" || options.eval == "sampled",
           "--eval must be 'full' or 'sampled', got '{}'", options.eval);
  GL_CHECK(inputs.embedding != nullptr || inputs.rows->has("feat"),
           "'{}' has no node feature 'feat': give learnable embeddings with --embed-dim",
           inputs.name);
  GL_CHECK(options.epochs >= 1, "--epochs must be >= 1, got {}", options.epochs);
  GL_CHECK(options.model.kind != "gcn" || inputs.in_degrees.defined(),
           "GCN needs whole-graph degrees, which '{}' does not provide (partition it again with "
           "this graphloom, which records them, or use sage, gat or mlp)",
           inputs.name);
  GL_CHECK(options.precision == "fp32" || options.precision == "bf16",
           "--precision must be fp32 or bf16, got '{}'", options.precision);
  const bool bf16 = options.precision == "bf16";
  const at::Tensor& valid_nodes = inputs.valid_nodes;
  const at::Tensor& test_nodes = inputs.test_nodes;
  torch::manual_seed(options.seed);

  const sampling::NeighborSource& source = *inputs.graph;
  const features::FeatureSource& rows = *inputs.rows;
  const sampling::NeighborSampler sampler(&source, {.fanouts = options.fanouts,
                                                    .edge_type_fanouts = options.edge_type_fanouts,
                                                    .seed = options.seed,
                                                    .edge_ids = false});
  // Nodes already split per trainer (node_split) are this rank's whole item set.
  const bool split_here = data_parallel(group) && !inputs.train_nodes_split;
  const sampling::ItemSampler items(inputs.train_nodes,
                                    {.batch_size = options.batch_size,
                                     .shuffle = true,
                                     .rank = split_here ? group->rank() : 0,
                                     .world_size = split_here ? group->world_size() : 1,
                                     .drop_uneven_inputs = options.drop_uneven_inputs,
                                     .seed = options.seed});

  // The model's input rows: the "feat" rows, or the learnable embedding's (featureless nodes).
  dist::DistEmbedding* embedding = inputs.embedding;
  const InputRows input_rows = [&](const at::Tensor& ids) {
    return embedding != nullptr ? embedding->pull(ids) : rows.gather("feat", ids);
  };
  nn::ModelConfig config = options.model;
  config.in = embedding != nullptr ? embedding->dim() : rows.info("feat").row_shape.at(0);
  config.out = inputs.num_classes;
  config.num_relations = inputs.num_relations;
  config.layers = static_cast<int64_t>(options.fanouts.size());
  const std::shared_ptr<nn::GnnModel> model = nn::make_model(config);
  if (inputs.in_degrees.defined()) model->set_graph_degrees(inputs.in_degrees, inputs.out_degrees);
  torch::optim::Adam optimizer(
      model->parameters(),
      torch::optim::AdamOptions(options.lr).weight_decay(options.weight_decay));

  TrainResult result;
  for (const auto& parameter : model->parameters()) result.parameters += parameter.numel();
  TrainState state;
  if (options.resume) {
    load_checkpoint(options.checkpoint, *model, optimizer, state);
    spdlog::info("resumed from '{}' after epoch {}", options.checkpoint.string(), state.epoch);
  }
  std::optional<GradientSynchronizer> sync;
  if (data_parallel(group)) {
    sync.emplace(model->parameters(), *group, options.sync);
    sync->broadcast_parameters(0);  // identical replicas whatever each rank initialised
    if (main_rank) {
      spdlog::info("data-parallel over {} ranks: {} gradient buckets", group->world_size(),
                   sync->num_buckets());
    }
  }
  int64_t step = 0;
  auto after_step = [&] {
    ++step;
    ++result.steps;
    if (options.check_sync_every > 0 && step % options.check_sync_every == 0) {
      sync->check_parameters_in_sync(step);
    }
  };
  MetricsLog log(main_rank ? options.metrics_log : std::filesystem::path(),
                 /*append=*/options.resume);
  // A model that reads its input in place gets the whole feature table and the input nodes as
  // its rows: the loader gathers no copy of them (the biggest tensor of a batch by far).
  const at::Tensor feature_table =
      embedding == nullptr && model->reads_input_table() ? rows.whole_table("feat") : at::Tensor();
  const bool gather_features = embedding == nullptr && !feature_table.defined();
  loader::DataLoader loader(&items, &sampler, &rows,
                            {.num_workers = options.num_workers,
                             .prefetch = options.prefetch,
                             .feature_names = gather_features ? std::vector<std::string>{"feat"}
                                                              : std::vector<std::string>{}});
  const Evaluator evaluator{
      *model, source, sampler, input_rows, options, group, inputs.layer_outputs};
  const bool show_progress = options.progress && main_rank;
  const at::Tensor valid_labels = rows.gather("label", valid_nodes);

  for (int64_t epoch = state.epoch + 1; epoch < options.epochs; ++epoch) {
    model->train();
    if (inputs.epoch_counters) inputs.epoch_counters();  // drop what evaluation moved
    loader.start_epoch(static_cast<uint64_t>(epoch));
    const int64_t batches = options.max_batches > 0
                                ? std::min(options.max_batches, loader.num_batches())
                                : loader.num_batches();
    std::optional<ProgressBar> progress;
    if (show_progress)
      progress.emplace(fmt::format("epoch {}/{}", epoch + 1, options.epochs), batches, "batches");
    StageTimes t;
    double loss_sum = 0;
    int64_t correct = 0;
    int64_t seen = 0;
    Timer epoch_timer;
    for (int64_t b = 0; b < batches; ++b) {
      Timer timer;
      std::optional<sampling::MiniBatch> batch = loader.next();
      t.wait += timer.seconds();
      if (!batch) break;
      t.sample += batch->sample_seconds;
      t.fetch += batch->fetch_seconds;
      timer.reset();
      // Embedding rows are pulled here, as leaves whose gradient goes back to their owners.
      const torch::Tensor x = feature_table.defined() ? feature_table
                              : embedding != nullptr
                                  ? embedding->pull(batch->input_nodes()).set_requires_grad(true)
                                  : batch->features.at("feat");
      torch::Tensor logits;
      {
        const AutocastScope autocast(bf16);
        logits = full_precision(model->forward(
            batch->blocks, x, feature_table.defined() ? batch->input_nodes() : at::Tensor()));
      }
      const torch::Tensor loss = torch::nn::functional::cross_entropy(
          logits, batch->labels, torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
      t.forward += timer.seconds();
      timer.reset();
      optimizer.zero_grad();
      loss.backward();
      t.backward += timer.seconds();
      if (sync) {
        timer.reset();
        sync->synchronize();
        t.allreduce += timer.seconds();
      }
      timer.reset();
      optimizer.step();
      // Sparse: each rank's embedding gradients go to the rows' owners, unaveraged (as DGL).
      if (embedding != nullptr) embedding->step(batch->input_nodes(), x.grad());
      t.optimizer += timer.seconds();
      if (sync) {
        after_step();
      } else {
        ++result.steps;
      }
      const int64_t count = batch->seeds.numel();
      loss_sum += loss.item<double>() * static_cast<double>(count);
      correct += (logits.argmax(1) == batch->labels).sum().item<int64_t>();
      seen += count;
      if (progress) {
        progress->set_status(fmt::format("loss {:.4f}", loss.item<double>()));
        progress->advance(1, count);
      }
    }
    if (sync) {
      // Join: shadow the others' steps (zero gradients, weight 0) until every rank is done.
      Timer join_timer;
      while (sync->join() > 0) {
        optimizer.step();
        after_step();
      }
      t.allreduce += join_timer.seconds();
    }
    double train_seconds = epoch_timer.seconds();
    std::map<std::string, double> counters;
    if (inputs.epoch_counters) {
      counters = inputs.epoch_counters();
      std::vector<double> values;
      for (const auto& [name, value] : counters) values.push_back(value);
      reduce_sums(values, group);
      std::size_t i = 0;
      for (auto& [name, value] : counters) {
        value = values[i++];
        result.counters[name] += value;
      }
    }
    if (data_parallel(group)) {  // the slowest rank's time, so every rank reports the same
      at::Tensor slowest = at::full({1}, train_seconds, at::kDouble);
      group->allreduce(slowest, dist::ReduceOp::kMax);
      train_seconds = slowest.item<double>();
    }
    if (progress) progress->finish();
    std::vector<double> totals{loss_sum, static_cast<double>(correct), static_cast<double>(seen)};
    reduce_sums(totals, group);
    loss_sum = totals[0];
    correct = static_cast<int64_t>(totals[1]);
    seen = static_cast<int64_t>(totals[2]);
    result.train_seconds += train_seconds;
    result.seeds_per_second += static_cast<double>(seen);  // divided at the end
    result.times.sample += t.sample, result.times.fetch += t.fetch, result.times.wait += t.wait;
    result.times.forward += t.forward, result.times.backward += t.backward;
    result.times.optimizer += t.optimizer, result.times.allreduce += t.allreduce;
    ++result.epochs_run;

    nlohmann::json record = {
        {"epoch", epoch},
        {"loss", loss_sum / std::max<int64_t>(seen, 1)},
        {"train_acc", static_cast<double>(correct) / std::max<int64_t>(seen, 1)},
        {"seeds_per_s", seen / train_seconds},
        {"time",
         {{"sample", t.sample},
          {"fetch", t.fetch},
          {"wait", t.wait},
          {"forward", t.forward},
          {"backward", t.backward},
          {"optimizer", t.optimizer},
          {"allreduce", t.allreduce},
          {"train", train_seconds}}}};
    if (!counters.empty()) record["io"] = counters;
    std::string io_status;
    if (counters.count("remote_bytes"))
      io_status += fmt::format("  remote {:.1f} MB", counters["remote_bytes"] / 1e6);
    if (counters.count("cache_hits")) {
      const double lookups = counters["cache_hits"] + counters["cache_misses"];
      record["cache_hit_rate"] = lookups > 0 ? counters["cache_hits"] / lookups : 0.0;
      io_status +=
          fmt::format("  cache hits {:.1f}%", 100 * record["cache_hit_rate"].get<double>());
    }
    const bool last = epoch + 1 == options.epochs;
    bool stop = false;
    if (options.eval_every > 0 && ((epoch + 1) % options.eval_every == 0 || last)) {
      Timer eval_timer;
      const at::Tensor logits = evaluator.logits({valid_nodes})[0];
      const double val_acc = accuracy(logits, valid_labels);
      record["val_acc"] = val_acc;
      record["val_f1"] = macro_f1(logits, valid_labels, inputs.num_classes);
      record["time"]["eval"] = eval_timer.seconds();
      stop = state.record_validation(val_acc, epoch, *model, options.eval_every, options.patience);
    }
    stop = rank0_decides(stop, group);
    state.epoch = epoch;
    log.write(record);
    if (main_rank)
      spdlog::info("epoch {:>3}  loss {:.4f}  train acc {:.4f}{}  {:.0f} seeds/s{}", epoch + 1,
                   record["loss"].get<double>(), record["train_acc"].get<double>(),
                   record.contains("val_acc")
                       ? fmt::format("  val acc {:.4f}", record["val_acc"].get<double>())
                       : "",
                   record["seeds_per_s"].get<double>(), io_status);
    if (main_rank && !options.checkpoint.empty()) {
      save_checkpoint(options.checkpoint, *model, optimizer, state);
    }
    if (stop) {
      if (main_rank)
        spdlog::info("early stopping: no better validation accuracy for {} epochs",
                     options.patience);
      break;
    }
  }
  result.seeds_per_second =
      result.train_seconds > 0 ? result.seeds_per_second / result.train_seconds : 0;
  result.best_val_acc = state.best_val;
  result.best_epoch = state.best_epoch;
  if (options.final_test) {
    if (!state.best_parameters.empty()) restore_parameters(*model, state.best_parameters);
    const auto logits = evaluator.logits({test_nodes});
    const at::Tensor test_labels = rows.gather("label", test_nodes);
    result.test_acc = accuracy(logits[0], test_labels);
    result.test_f1 = macro_f1(logits[0], test_labels, inputs.num_classes);
  }
  return result;
}

}  // namespace graphloom::train
