// The text of result_report.h, one line per kind of figure.
#include "graphloom/train/result_report.h"

#include "graphloom/train/metrics_log.h"
#include "graphloom/train/task.h"

#include <fmt/format.h>

namespace graphloom::train {
namespace {

// The data path's counters as console text: "  remote 1.2 MB  cache hits 40.0%" (or disk).
std::string io_status(const nlohmann::json& record) {
  std::string status;
  if (record.contains("io") && record["io"].contains("remote_bytes"))
    status += fmt::format("  remote {:.1f} MB", record["io"]["remote_bytes"].get<double>() / 1e6);
  if (record.contains("io") && record["io"].contains("disk_bytes"))
    status += fmt::format("  disk {:.1f} MB", record["io"]["disk_bytes"].get<double>() / 1e6);
  if (record.contains("cache_hit_rate"))
    status += fmt::format("  cache hits {:.1f}%", 100 * record["cache_hit_rate"].get<double>());
  return status;
}

std::string describe_node_result(const TrainResult& result) {
  const std::string auc =
      result.test_auc < 0 ? "" : fmt::format("  test ROC-AUC {:.4f}", result.test_auc);
  return fmt::format(
      "epochs {}  best epoch {}  {:.0f} seeds/s\nvalidation accuracy {:.4f}\n"
      "test accuracy {:.4f}  test macro-F1 {:.4f}{}\n",
      result.epochs_run, result.best_epoch + 1, result.seeds_per_second, result.best_val_acc,
      result.test_acc, result.test_f1, auc);
}

// "full ranking of N candidates, Q test queries: Recall@20 ...  (popularity: ...)".
std::string describe_ranking(const RankingFigures& figures, int64_t candidates, const char* which) {
  if (figures.recall_at_20 < 0) return "";
  const std::string weighted = figures.weighted_popularity_recall_at_20 < 0
                                   ? ""
                                   : fmt::format("; recency-weighted popularity: {:.4f} / {:.4f}",
                                                 figures.weighted_popularity_recall_at_20,
                                                 figures.weighted_popularity_map_at_10);
  return fmt::format(
      "full ranking of {} candidates, {} {} queries: Recall@20 {:.4f}  MAP@10 {:.4f}  "
      "(popularity: {:.4f} / {:.4f}{})\n",
      candidates, figures.queries, which, figures.recall_at_20, figures.map_at_10,
      figures.popularity_recall_at_20, figures.popularity_map_at_10, weighted);
}

std::string describe_link_result(const LinkOptions& link, const LinkResult& result) {
  std::string text = fmt::format("epochs {}  best epoch {}  {:.0f} edges/s\n", result.epochs_run,
                                 result.best_epoch + 1, result.edges_per_second);
  text += fmt::format("validation AUC {:.4f}\n", result.best_val_auc);
  text += fmt::format(
      "test AUC {:.4f}  Hits@{} {:.4f}  MRR {:.4f}{}\n", result.test_auc, link.hits_k,
      result.test_hits, result.test_mrr,
      result.test_common_neighbors_auc >= 0
          ? fmt::format("  (common neighbours AUC {:.4f})", result.test_common_neighbors_auc)
          : "");
  text += describe_ranking(result.ranking.all, result.ranking_candidates, "test");
  if (result.ranking.warm.queries != result.ranking.all.queries) {
    text += describe_ranking(result.ranking.warm, result.ranking_candidates,
                             "warm (with training pairs)");
  }
  return text;
}

}  // namespace

std::string describe_time_split(const StageTimes& t, int world_size) {
  std::string text = fmt::format(
      "time split of rank 0 (s): sample {:.2f}  fetch {:.2f} (in loader workers)  waiting for "
      "batches {:.2f}  forward {:.2f}  backward {:.2f}  optimizer {:.2f}\n",
      t.sample, t.fetch, t.wait, t.forward, t.backward, t.optimizer);
  if (world_size > 1) {
    text +=
        fmt::format("data-parallel: {} ranks, gradient allreduce not hidden by backward {:.2f} s\n",
                    world_size, t.allreduce);
  }
  return text;
}

std::string describe_result(const TrainJob& job, const TrainJobResult& result, int world_size,
                            double seconds) {
  const bool link = result.task == TaskKind::kLinkPrediction;
  std::string text = fmt::format("model {}  ", name_of(job.options.model.kind));
  text += link ? describe_link_result(job.link, result.link) : describe_node_result(result.node);
  text += describe_time_split(link ? result.link.times : result.node.times, world_size);
  text += fmt::format("total time {:.1f} s\n", seconds);
  return text;
}

nlohmann::json result_json(const TrainJob& job, const TrainJobResult& result, int world_size,
                           double seconds) {
  const bool link = result.task == TaskKind::kLinkPrediction;
  const StageTimes& t = link ? result.link.times : result.node.times;
  nlohmann::json json = {{"task", name_of(result.task)},
                         {"model", name_of(job.options.model.kind)},
                         {"world_size", world_size},
                         {"seconds", seconds},
                         {"time", stage_times_json(t)}};
  if (link) {
    const LinkResult& r = result.link;
    json.update({{"epochs_run", r.epochs_run},
                 {"best_epoch", r.best_epoch + 1},
                 {"best_val_auc", r.best_val_auc},
                 {"test_auc", r.test_auc},
                 {"test_hits", r.test_hits},
                 {"test_mrr", r.test_mrr},
                 {"edges_per_second", r.edges_per_second}});
  } else {
    const TrainResult& r = result.node;
    json.update({{"epochs_run", r.epochs_run},
                 {"best_epoch", r.best_epoch + 1},
                 {"best_val_acc", r.best_val_acc},
                 {"test_acc", r.test_acc},
                 {"test_f1", r.test_f1},
                 {"seeds_per_second", r.seeds_per_second},
                 {"train_seconds", r.train_seconds}});
    if (r.test_auc >= 0) json["test_auc"] = r.test_auc;
  }
  // The data path's totals: remote bytes, cache hits, the device cache's hit rate.
  const auto& counters = link ? result.link.counters : result.node.counters;
  if (!counters.empty()) json["counters"] = counters;
  return json;
}

std::string describe_epoch(const TaskNames& names, int64_t epoch, const nlohmann::json& record) {
  std::string line =
      fmt::format("epoch {:>3}  loss {:.4f}", epoch + 1, record["loss"].get<double>());
  for (const auto& [key, name] : names.train_metrics) {
    if (record.contains(key)) line += fmt::format("  {} {:.4f}", name, record[key].get<double>());
  }
  if (record.contains(names.validation_key)) {
    line +=
        fmt::format("  {} {:.4f}", names.validation, record[names.validation_key].get<double>());
  }
  line += fmt::format("  {:.0f} {}/s{}", record[names.items + "_per_s"].get<double>(), names.items,
                      io_status(record));
  return line;
}

}  // namespace graphloom::train
