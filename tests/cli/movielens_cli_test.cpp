// MovieLens (../shared/datasets/movielens_small) as a typed graph: import, and link prediction
// ranking all movies against the popularity baseline. SKIPPED without ../shared.
#include <gtest/gtest.h>

#include <iostream>
#include <regex>
#include <string>

#include "graphloom/io/dataset.h"
#include "support/test_support.h"

namespace graphloom {
namespace {

using testing::run_graphloom;

TEST(CliMovieLens, ImportsATypedGraphWithRatingSplits) {
  GL_REQUIRE_SHARED_DATASET(movielens, "movielens_small");
  testing::TempDir dir;
  const auto result =
      run_graphloom("convert --from shared " + movielens.string() + " ml", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const io::Dataset data = io::load_dataset(dir / "ml");
  EXPECT_EQ(data.schema.node_types, (std::vector<std::string>{"user", "movie", "genre"}));
  EXPECT_EQ(data.num_nodes(), 610 + 9742 + 20);
  // The temporal split of the folder: 80/10/10 of the 100,836 ratings.
  EXPECT_EQ(data.edge_splits.at("train").size(0) + data.edge_splits.at("valid").size(0) +
                data.edge_splits.at("test").size(0),
            100836);
  // Message passing holds the training ratings both ways and 22,084 movie-genre edges both ways.
  EXPECT_EQ(data.graph.num_edges(), 2 * data.edge_splits.at("train").size(0) + 2 * 22084);
  // No test rating is a message-passing edge; negatives are movies the user never rated.
  const at::Tensor test = data.edge_splits.at("test");
  const at::Tensor indptr = data.graph.indptr;
  const at::Tensor indices = data.graph.indices.to(at::kLong);
  for (int64_t i = 0; i < test.size(0); i += 50) {
    const int64_t user = test[i][0].item<int64_t>();
    const int64_t movie = test[i][1].item<int64_t>();
    const at::Tensor sources =
        indices.slice(0, indptr[movie].item<int64_t>(), indptr[movie + 1].item<int64_t>());
    ASSERT_FALSE((sources == user).any().item<bool>()) << "test rating in the graph";
  }
  const at::Tensor negatives = data.edge_splits.at("test_neg").select(1, 1);
  EXPECT_TRUE(((negatives >= 610) & (negatives < 610 + 9742)).all().item<bool>());
  // Rating edges carry their rating's time (both ways), genre edges time 0.
  ASSERT_TRUE(data.graph.edge_time.defined());
  const at::Tensor& train_times = data.edge_split_times.at("train");
  EXPECT_EQ((data.graph.edge_time > 0).sum().item<int64_t>(), 2 * train_times.numel());
  EXPECT_EQ(data.graph.edge_time.max().item<int64_t>(), train_times.max().item<int64_t>());
}

// Test AUC of `train` on the temporal split, from its output.
double test_auc_of(const testing::CommandResult& result) {
  std::smatch match;
  EXPECT_TRUE(std::regex_search(result.output, match, std::regex("test AUC ([0-9.]+)")))
      << result.output;
  return match.empty() ? 0.0 : std::stod(match[1]);
}

// Every test rating comes after every training rating. Trained on pairs whose own edge (and
// later ones) their blocks contain, a model learns what the test pairs never show: it ranks
// test pairs below chance. Sampling each pair's past only (--temporal) trains what the test
// asks (measured after one epoch: 0.43-0.47 without, 0.60-0.62 with, seeds 1-3).
TEST(CliMovieLens, TemporalSamplingTrainsWhatTheTemporalSplitTests) {
  GL_REQUIRE_SHARED_DATASET(movielens, "movielens_small");
  testing::TempDir dir;
  ASSERT_EQ(
      run_graphloom("convert --from shared " + movielens.string() + " ml", dir.path()).exit_code,
      0);
  const std::string train =
      "train --data ml --task link --model rsage --fanouts 10,10 --epochs 1 --batch-size 1024 "
      "--hidden 64 --dropout 0 --scorer dot --loss bpr --lr 0.01 --negatives 4 --no-progress";
  const auto plain = run_graphloom(train, dir.path());
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const auto temporal = run_graphloom(train + " --temporal", dir.path());
  ASSERT_EQ(temporal.exit_code, 0) << temporal.output;
  EXPECT_GT(test_auc_of(temporal), 0.55) << temporal.output;
  EXPECT_GT(test_auc_of(temporal), test_auc_of(plain) + 0.1) << plain.output << "\n"
                                                             << temporal.output;
}

// On the random split LightGCN ranks held-out movies clearly better than popularity.
TEST(CliMovieLens, LightGcnBeatsPopularityOnTheRandomSplit) {
  GL_REQUIRE_SHARED_DATASET(movielens, "movielens_small");
  testing::TempDir dir;
  ASSERT_EQ(
      run_graphloom("convert --from shared " + movielens.string() + " ml --rating-split random",
                    dir.path())
          .exit_code,
      0);
  const auto result = run_graphloom(
      "train --data ml --task link --model lightgcn --fanouts -1,-1,-1 --epochs 30 "
      "--batch-size 4096 --lr 0.01 --scorer dot --loss bpr --eval-every 10 --no-progress",
      dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(
      result.output, match,
      std::regex("9742 candidates, [0-9]+ test queries: Recall@20 ([0-9.]+)  MAP@10 ([0-9.]+)  "
                 "\\(popularity: ([0-9.]+) / ([0-9.]+)\\)")))
      << result.output;
  const double recall = std::stod(match[1]);
  const double popularity_recall = std::stod(match[3]);
  EXPECT_GT(recall, popularity_recall * 1.15) << result.output;
}

// The temporal split: 47 of its 74 test users rated nothing before the test period, and tastes
// drift. Time-aware training with the recency-weighted popularity prior lets LightGCN and
// relational GraphSAGE beat plain popularity clearly; they stay near recency-weighted
// popularity, their prior.
TEST(CliMovieLens, TimeAwareModelsBeatPopularityOnTheTemporalSplit) {
  GL_REQUIRE_SHARED_DATASET(movielens, "movielens_small");
  testing::TempDir dir;
  ASSERT_EQ(
      run_graphloom("convert --from shared " + movielens.string() + " ml", dir.path()).exit_code,
      0);
  const std::string common =
      "train --data ml --task link --scorer dot --loss bpr --lr 0.01 --negatives 4 "
      "--recency-half-life 500 --popularity-prior --no-progress ";
  for (const std::string model :
       {"--model lightgcn --fanouts -1,-1,-1 --epochs 30 --batch-size 4096 --eval-every 10",
        "--model rsage --fanouts 10,10 --epochs 10 --batch-size 1024 --hidden 64 --dropout 0 "
        "--eval-every 5"}) {
    const auto result = run_graphloom(common + model, dir.path());
    ASSERT_EQ(result.exit_code, 0) << result.output;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(
        result.output, match,
        std::regex("9742 candidates, 74 test queries: Recall@20 ([0-9.]+)  MAP@10 ([0-9.]+)  "
                   "\\(popularity: ([0-9.]+) / ([0-9.]+); recency-weighted popularity: "
                   "([0-9.]+) / ([0-9.]+)\\)")))
        << result.output;
    const double recall = std::stod(match[1]);
    const double map = std::stod(match[2]);
    EXPECT_GT(recall, 1.3 * std::stod(match[3])) << model << "\n" << result.output;
    EXPECT_GT(map, 1.15 * std::stod(match[4])) << model << "\n" << result.output;
    // What the learned part adds on top of its prior must not spoil it.
    EXPECT_GT(recall, 0.85 * std::stod(match[5])) << model << "\n" << result.output;
    EXPECT_GT(map, 0.85 * std::stod(match[6])) << model << "\n" << result.output;
    std::cout << model << ": " << match[0] << "\n";
  }
}

}  // namespace
}  // namespace graphloom
