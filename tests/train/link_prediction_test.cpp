// Link prediction end to end on a generated graph: the trained model ranks held-out edges
// above non-edges better than the common-neighbour heuristic, with features or learnable
// embeddings, BCE or BPR; missing splits give a clear error.
#include <gtest/gtest.h>

#include "graphloom/base/error.h"
#include "graphloom/io/generators.h"
#include "graphloom/io/link_splits.h"
#include "graphloom/train/link_prediction.h"
#include "link_fixtures.h"
#include "support/test_support.h"

namespace graphloom::train {
namespace {

using link_fixtures::quick_link_options;
using link_fixtures::split_planted;

TEST(LinkPrediction, BeatsCommonNeighboursWithFeaturesAndWithEmbeddings) {
  const io::Dataset data = split_planted();
  const LinkResult with_features = train_link_prediction(data, quick_link_options(), {});
  // Class homophily caps what features can tell here (negatives share a class 1 time in 5).
  EXPECT_GT(with_features.test_auc, 0.75);
  EXPECT_GT(with_features.test_auc, with_features.test_common_neighbors_auc);
  EXPECT_GT(with_features.test_mrr, 0.0);
  // Batches come from the DataLoader: their sampling is timed in its workers.
  EXPECT_GT(with_features.times.sample, 0.0);
  EXPECT_GT(with_features.times.forward, 0.0);
  // Full ranking over all 2000 nodes, next to ranking by popularity.
  EXPECT_GT(with_features.ranking.all.recall_at_20, 0.0);
  EXPECT_GE(with_features.ranking.all.popularity_recall_at_20, 0.0);
  EXPECT_GT(with_features.ranking.all.map_at_10, with_features.ranking.all.popularity_map_at_10);
  EXPECT_GE(with_features.best_epoch, 0);

  const LinkResult embedded = train_link_prediction(
      data, quick_link_options(),
      {.scorer = Scorer::kMlp, .loss = LinkLoss::kBpr, .negatives = 2, .embed_dim = 32});
  EXPECT_GT(embedded.test_auc, embedded.test_common_neighbors_auc);
}

TEST(LinkPrediction, LightGcnPropagatesEmbeddingsOverTheWholeGraph) {
  const io::Dataset data = split_planted();
  TrainOptions options = quick_link_options();
  options.model.kind = nn::ModelKind::kLightGcn;
  options.fanouts = {-1, -1};  // two propagation layers
  options.epochs = 20;
  const LinkResult result = train_link_prediction(data, options, {.loss = LinkLoss::kBpr});
  EXPECT_GT(result.test_auc, result.test_common_neighbors_auc);
  EXPECT_GT(result.test_auc, 0.6);  // well above chance; features-free, 20 epochs
}

// Time-aware training with the popularity prior on a planted graph: it draws its pairs by
// weight and still learns.
TEST(LinkPrediction, RecencyWeightedTrainingLearnsAndReportsTheWeightedBaseline) {
  io::Dataset data = split_planted();
  const int64_t m = data.edge_splits.at("train").size(0);
  data.edge_split_times["train"] = at::arange(m, at::kLong) * 3600;  // one pair an hour
  const LinkResult result = train_link_prediction(
      data, quick_link_options(), {.recency_half_life_days = 30, .popularity_prior = true});
  EXPECT_GT(result.test_auc, 0.7);
  EXPECT_GE(result.ranking.all.weighted_popularity_recall_at_20, 0.0);
}

TEST(LinkPrediction, MissingEdgeSplitsNameWhatIsNeeded) {
  const io::Dataset data = io::generate_planted({.num_nodes = 100});
  const std::string message =
      testing::error_of([&] { train_link_prediction(data, quick_link_options(), {}); });
  EXPECT_NE(message.find("has no 'train' edge split"), std::string::npos) << message;
}

}  // namespace
}  // namespace graphloom::train
