// `train --task link`: the link-prediction flags and the printed result (AUC, Hits@K, MRR,
// full ranking next to its popularity baselines).
#include <fmt/format.h>

#include "commands.h"
#include "flag_checks.h"

namespace graphloom::cli {

void add_link_flags(CLI::App* cmd, train::LinkOptions& link, const char* group) {
  add_enum_option(cmd, "--scorer", link.scorer,
                  "Pair score: dot (product of the two embeddings) or mlp (on their element-wise "
                  "product)")
      ->group(group);
  add_enum_option(cmd, "--loss", link.loss,
                  "bce (positives 1, negatives 0) or bpr (each positive above its negatives)")
      ->group(group);
  cmd->add_option("--negatives", link.negatives, "Negative pairs per positive edge")
      ->check(positive())
      ->capture_default_str()
      ->group(group);
  add_enum_option(cmd, "--negative-sampler", link.negative_sampler,
                  "Negative destinations: uniform, or degree (degree^0.75, harder)")
      ->group(group);
  cmd->add_flag("--bias", link.destination_bias,
                "Learn a bias per destination node added to every score (a popularity prior: "
                "queries with no training pairs then rank popular candidates first)")
      ->group(group);
  cmd->add_option("--recency-half-life", link.recency_half_life_days,
                  "Time-aware training, in days: each epoch draws its training pairs with "
                  "probability halving per this many days before the latest one (needs pair "
                  "times in unix seconds, e.g. a MovieLens import or its partitions); 0 draws "
                  "every pair once")
      ->check(non_negative())
      ->capture_default_str()
      ->group(group);
  cmd->add_flag("--popularity-prior", link.popularity_prior,
                "Add log(1 + the destination's training pair count) times a learned scale to "
                "every score, the count recency-weighted with --recency-half-life: queries "
                "with no training pairs rank by (recent) popularity")
      ->group(group);
  cmd->add_option("--hits-k", link.hits_k, "K of the Hits@K reported on the test split")
      ->check(positive())
      ->capture_default_str()
      ->group(group);
}

void print_link_result(const std::string& model, const train::LinkOptions& link,
                       const train::LinkResult& result, const distributed::ProcessGroup* group,
                       double seconds) {
  fmt::print("model {}  epochs {}  best epoch {}  {:.0f} edges/s\n", model, result.epochs_run,
             result.best_epoch + 1, result.edges_per_second);
  fmt::print("validation AUC {:.4f}\n", result.best_val_auc);
  fmt::print("test AUC {:.4f}  Hits@{} {:.4f}  MRR {:.4f}{}\n", result.test_auc, link.hits_k,
             result.test_hits, result.test_mrr,
             result.test_common_neighbors_auc >= 0
                 ? fmt::format("  (common neighbours AUC {:.4f})", result.test_common_neighbors_auc)
                 : "");
  const auto print_ranking = [&](const train::RankingFigures& figures, const char* which) {
    if (figures.recall_at_20 < 0) return;
    fmt::print(
        "full ranking of {} candidates, {} {} queries: Recall@20 {:.4f}  MAP@10 {:.4f}  "
        "(popularity: {:.4f} / {:.4f}{})\n",
        result.ranking_candidates, figures.queries, which, figures.recall_at_20, figures.map_at_10,
        figures.popularity_recall_at_20, figures.popularity_map_at_10,
        figures.weighted_popularity_recall_at_20 < 0
            ? ""
            : fmt::format("; recency-weighted popularity: {:.4f} / {:.4f}",
                          figures.weighted_popularity_recall_at_20,
                          figures.weighted_popularity_map_at_10));
  };
  print_ranking(result.ranking.all, "test");
  if (result.ranking.warm.queries != result.ranking.all.queries) {
    print_ranking(result.ranking.warm, "warm (with training pairs)");
  }
  print_time_split(result.times, group);
  fmt::print("total time {:.1f} s\n", seconds);
}

}  // namespace graphloom::cli
