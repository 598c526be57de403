// The node-classification loop: loader -> model -> loss -> Adam, with validation, early
// stopping, checkpoints, a metrics log and a final test of the best model.
#include "graphloom/train/node_classification.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/base/progress.h"
#include "graphloom/base/timer.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/graph/transforms.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/train/checkpoint.h"
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

// Logits of `nodes` from mini-batches sampled with the training fanouts.
at::Tensor sampled_logits(nn::GnnModel& model, const sampling::NeighborSampler& sampler,
                          const features::FeatureSource& features, const at::Tensor& nodes,
                          int64_t batch_size) {
  torch::NoGradGuard no_grad;
  model.eval();
  std::vector<at::Tensor> parts;
  for (int64_t begin = 0; begin < nodes.numel(); begin += batch_size) {
    const at::Tensor seeds = nodes.slice(0, begin, std::min(nodes.numel(), begin + batch_size));
    const sampling::MiniBatch batch = sampler.sample(seeds, /*epoch=*/~0ULL, begin);
    parts.push_back(model.forward(batch.blocks, features.gather("feat", batch.input_nodes())));
  }
  model.train();
  return at::cat(parts);
}

struct Evaluator {
  nn::GnnModel& model;
  const sampling::NeighborSource& source;
  const sampling::NeighborSampler& sampler;
  const features::FeatureSource& features;
  const at::Tensor& feature_table;
  const TrainOptions& options;

  // Logits of each requested split.
  std::vector<at::Tensor> logits(const std::vector<at::Tensor>& node_sets) const {
    std::vector<at::Tensor> out;
    if (options.eval == "full") {
      const at::Tensor all = layerwise_inference(model, source, feature_table,
                                                 options.eval_batch_size, options.progress);
      for (const auto& nodes : node_sets) out.push_back(all.index_select(0, nodes));
    } else {
      for (const auto& nodes : node_sets) {
        out.push_back(sampled_logits(model, sampler, features, nodes, options.batch_size));
      }
    }
    return out;
  }
};

}  // namespace

TrainResult train_node_classification(const io::Dataset& dataset, const TrainOptions& options) {
  GL_CHECK(dataset.labels.defined() && dataset.num_classes > 0,
           "dataset '{}' has no labels: node classification needs them", dataset.name);
  GL_CHECK(dataset.node_features.count("feat"), "dataset '{}' has no node feature named 'feat'",
           dataset.name);
  GL_CHECK(options.eval == "full" || options.eval == "sampled",
           "--eval must be 'full' or 'sampled', got '{}'", options.eval);
  GL_CHECK(options.epochs >= 1, "--epochs must be >= 1, got {}", options.epochs);
  const at::Tensor& train_nodes = split(dataset, "train");
  const at::Tensor& valid_nodes = split(dataset, "valid");
  const at::Tensor& test_nodes = split(dataset, "test");
  torch::manual_seed(options.seed);

  // Graph and features as the model wants them.
  graph::CscGraph graph = dataset.graph;
  const bool loops =
      options.self_loops == "add" || (options.self_loops == "auto" &&
                                      (options.model.kind == "gcn" || options.model.kind == "gat"));
  if (loops) graph = graph::add_self_loops(graph::remove_self_loops(graph));
  at::Tensor features = dataset.node_features.at("feat").to(at::kFloat);
  if (options.normalize_features == "row") {
    features = features / features.sum(1, true).clamp_min(1e-12);
  } else {
    GL_CHECK(options.normalize_features == "none",
             "--normalize-features must be 'none' or 'row', got '{}'", options.normalize_features);
  }
  const sampling::LocalNeighborSource source(graph);
  const sampling::NeighborSampler sampler(&source,
                                          {.fanouts = options.fanouts, .seed = options.seed});
  const sampling::ItemSampler items(
      train_nodes, {.batch_size = options.batch_size, .shuffle = true, .seed = options.seed});
  features::TensorFeatureSource rows({{"feat", features}, {"label", dataset.labels}});

  nn::ModelConfig config = options.model;
  config.in = features.size(1);
  config.out = dataset.num_classes;
  config.layers = static_cast<int64_t>(options.fanouts.size());
  const std::shared_ptr<nn::GnnModel> model = nn::make_model(config);
  model->set_graph_degrees(graph.in_degrees(), graph.out_degrees());
  torch::optim::Adam optimizer(
      model->parameters(),
      torch::optim::AdamOptions(options.lr).weight_decay(options.weight_decay));

  TrainState state;
  if (options.resume) {
    load_checkpoint(options.checkpoint, *model, optimizer, state);
    spdlog::info("resumed from '{}' after epoch {}", options.checkpoint.string(), state.epoch);
  }
  MetricsLog log(options.metrics_log, /*append=*/options.resume);
  loader::DataLoader loader(&items, &sampler, &rows,
                            {.num_workers = options.num_workers, .prefetch = options.prefetch});
  const Evaluator evaluator{*model, source, sampler, rows, features, options};
  const at::Tensor valid_labels = dataset.labels.index_select(0, valid_nodes);

  TrainResult result;
  for (int64_t epoch = state.epoch + 1; epoch < options.epochs; ++epoch) {
    model->train();
    loader.start_epoch(static_cast<uint64_t>(epoch));
    const int64_t batches = options.max_batches > 0
                                ? std::min(options.max_batches, loader.num_batches())
                                : loader.num_batches();
    std::optional<ProgressBar> progress;
    if (options.progress)
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
      const torch::Tensor logits = model->forward(batch->blocks, batch->features.at("feat"));
      const torch::Tensor loss = torch::nn::functional::cross_entropy(
          logits, batch->labels, torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
      t.forward += timer.seconds();
      timer.reset();
      optimizer.zero_grad();
      loss.backward();
      t.backward += timer.seconds();
      timer.reset();
      optimizer.step();
      t.optimizer += timer.seconds();
      const int64_t count = batch->seeds.numel();
      loss_sum += loss.item<double>() * static_cast<double>(count);
      correct += (logits.argmax(1) == batch->labels).sum().item<int64_t>();
      seen += count;
      if (progress) {
        progress->set_status(fmt::format("loss {:.4f}", loss.item<double>()));
        progress->advance(1, count);
      }
    }
    const double train_seconds = epoch_timer.seconds();
    if (progress) progress->finish();
    result.train_seconds += train_seconds;
    result.seeds_per_second += static_cast<double>(seen);  // divided at the end
    result.times.sample += t.sample, result.times.fetch += t.fetch, result.times.wait += t.wait;
    result.times.forward += t.forward, result.times.backward += t.backward;
    result.times.optimizer += t.optimizer;
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
          {"train", train_seconds}}}};
    const bool last = epoch + 1 == options.epochs;
    bool stop = false;
    if (options.eval_every > 0 && ((epoch + 1) % options.eval_every == 0 || last)) {
      Timer eval_timer;
      const at::Tensor logits = evaluator.logits({valid_nodes})[0];
      const double val_acc = accuracy(logits, valid_labels);
      record["val_acc"] = val_acc;
      record["val_f1"] = macro_f1(logits, valid_labels, dataset.num_classes);
      record["time"]["eval"] = eval_timer.seconds();
      if (val_acc > state.best_val) {
        state.best_val = val_acc;
        state.best_epoch = epoch;
        state.best_parameters = copy_parameters(*model);
        state.epochs_without_improvement = 0;
      } else {
        state.epochs_without_improvement += options.eval_every;
        stop = options.patience > 0 && state.epochs_without_improvement >= options.patience;
      }
    }
    state.epoch = epoch;
    log.write(record);
    spdlog::info("epoch {:>3}  loss {:.4f}  train acc {:.4f}{}  {:.0f} seeds/s", epoch + 1,
                 record["loss"].get<double>(), record["train_acc"].get<double>(),
                 record.contains("val_acc")
                     ? fmt::format("  val acc {:.4f}", record["val_acc"].get<double>())
                     : "",
                 record["seeds_per_s"].get<double>());
    if (!options.checkpoint.empty()) save_checkpoint(options.checkpoint, *model, optimizer, state);
    if (stop) {
      spdlog::info("early stopping: no better validation accuracy for {} epochs", options.patience);
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
    const at::Tensor test_labels = dataset.labels.index_select(0, test_nodes);
    result.test_acc = accuracy(logits[0], test_labels);
    result.test_f1 = macro_f1(logits[0], test_labels, dataset.num_classes);
  }
  return result;
}

}  // namespace graphloom::train
