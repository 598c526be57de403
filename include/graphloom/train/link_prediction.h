// Link prediction (DGL's link-prediction examples, PyG's LinkNeighborLoader): mini-batches of
// training edges with k sampled negatives each (the DataLoader's pair stage) and the blocks of
// all their endpoints, prefetched like node classification's batches, a GNN
// encoder, a dot-product or MLP scorer, BCE or BPR loss. Evaluation embeds every node with
// layer-wise full-neighbor inference and ranks held-out positives against held-out negatives.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "graphloom/io/dataset.h"
#include "graphloom/train/link_ranking.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::train {

// A pair's score: the dot product of its embeddings, or an MLP on their element-wise product.
enum class Scorer { kDot, kMlp };
// Binary cross entropy of positives against negatives, or BPR (each positive above each of its
// negatives).
enum class LinkLoss { kBce, kBpr };
// Negative destinations: uniform over the candidates, or by degree^0.75.
enum class NegativeSampling { kUniform, kDegree };

// The input embedding's width on graphs without "feat" when LinkOptions::embed_dim is 0.
inline constexpr int64_t kFeaturelessEmbedDim = 64;

struct LinkOptions {
  Scorer scorer = Scorer::kDot;
  LinkLoss loss = LinkLoss::kBce;
  int64_t negatives = 1;  // per positive edge
  NegativeSampling negative_sampler = NegativeSampling::kUniform;
  // Learnable node embeddings of this width as the encoder's input (0: the "feat" rows, or
  // 64-wide embeddings when the dataset has no features).
  int64_t embed_dim = 0;
  int64_t hits_k = 50;  // Hits@K on the test split
  // A learned bias per destination node added to every score: a popularity prior, so that
  // queries with no training pairs (cold users of a temporal split) still rank well.
  bool destination_bias = false;
  // Time-aware training: each epoch draws its training pairs (with replacement) in proportion
  // to 2^(-age / half-life), age being the time from the pair to the latest training pair.
  // Recent tastes and popularity then dominate what is learned, as a temporal test split
  // rewards. 0: every pair once per epoch. Needs the training pairs' times.
  double recency_half_life_days = 0;
  // A fixed popularity prior in every score: log(1 + the destination's training pairs, each
  // counted with its recency weight), times a learned scale. A query with no training pairs
  // then ranks by (recent) popularity; the others by the model on top of it.
  bool popularity_prior = false;

  // Throws OptionError naming the first field whose value cannot work.
  void validate() const;
};

struct LinkResult {
  double best_val_auc = 0;
  int64_t best_epoch = -1;
  double test_auc = 0;
  double test_hits = 0;  // Hits@LinkOptions::hits_k
  double test_mrr = 0;
  // The heuristic baseline on the same pairs (-1 on typed graphs: pairs of different types
  // share no neighbors).
  double test_common_neighbors_auc = -1;
  // Full ranking (train/link_ranking.h): each query ranks every candidate (its training and
  // validation partners excluded), next to a popularity ranking of the same queries.
  FullRanking ranking;
  int64_t ranking_candidates = 0;
  int64_t epochs_run = 0;
  double edges_per_second = 0;  // positive training edges per second of training, all ranks
  StageTimes times;             // summed over all epochs of this run
  // TrainingInputs::epoch_counters summed over the ranks and epochs, and the device cache's.
  std::map<std::string, double> counters;
};

// With a process group of several ranks the run is data-parallel: each rank trains on its
// share of the training pairs, gradients (the input embedding's included) are averaged with
// Join for uneven shares, evaluation embeds every node with distributed layer-wise inference
// and every rank computes the same metrics; rank 0 logs and checkpoints.
LinkResult train_link_prediction(const TrainingInputs& inputs, const TrainOptions& options,
                                 const LinkOptions& link,
                                 distributed::ProcessGroup* group = nullptr);

// Needs the dataset's edge splits "train", "valid", "valid_neg", "test", "test_neg" (an lp_*
// import, or io::make_link_splits); `options` carries the encoder, fanouts, optimizer,
// epochs, evaluation cadence, early stopping, checkpoint and metrics log as for node
// classification (batch_size counts positive edges).
LinkResult train_link_prediction(const io::Dataset& dataset, const TrainOptions& options,
                                 const LinkOptions& link,
                                 distributed::ProcessGroup* group = nullptr);

}  // namespace graphloom::train

namespace graphloom {

template <>
struct EnumNames<train::Scorer> {
  static constexpr std::array<std::pair<std::string_view, train::Scorer>, 2> kNames{
      {{"dot", train::Scorer::kDot}, {"mlp", train::Scorer::kMlp}}};
};
template <>
struct EnumNames<train::LinkLoss> {
  static constexpr std::array<std::pair<std::string_view, train::LinkLoss>, 2> kNames{
      {{"bce", train::LinkLoss::kBce}, {"bpr", train::LinkLoss::kBpr}}};
};
template <>
struct EnumNames<train::NegativeSampling> {
  static constexpr std::array<std::pair<std::string_view, train::NegativeSampling>, 2> kNames{
      {{"uniform", train::NegativeSampling::kUniform},
       {"degree", train::NegativeSampling::kDegree}}};
};

}  // namespace graphloom
