// Link prediction (DGL's link-prediction examples, PyG's LinkNeighborLoader): mini-batches of
// training edges with k sampled negatives each and the blocks of all their endpoints, a GNN
// encoder, a dot-product or MLP scorer, BCE or BPR loss. Evaluation embeds every node with
// layer-wise full-neighbor inference and ranks held-out positives against held-out negatives.
#pragma once

#include <cstdint>
#include <string>

#include "graphloom/io/dataset.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::train {

struct LinkOptions {
  std::string scorer = "dot";                // dot | mlp (on the element-wise product)
  std::string loss = "bce";                  // bce | bpr
  int64_t negatives = 1;                     // per positive edge
  std::string negative_sampler = "uniform";  // uniform | degree (degree^0.75)
  // Learnable node embeddings of this width as the encoder's input (0: the "feat" rows, or
  // 64-wide embeddings when the dataset has no features).
  int64_t embed_dim = 0;
  int64_t hits_k = 50;  // Hits@K on the test split
};

struct LinkResult {
  double best_val_auc = 0;
  int64_t best_epoch = -1;
  double test_auc = 0;
  double test_hits = 0;  // Hits@LinkOptions::hits_k
  double test_mrr = 0;
  double test_common_neighbors_auc = 0;  // the heuristic baseline on the same pairs
  // Full ranking: each endpoint of a test positive ranks every node (its training and
  // validation neighbors and itself excluded); -1 when the graph is too big to rank in full.
  double test_recall_at_20 = -1;
  double test_map_at_10 = -1;
  double popularity_recall_at_20 = -1;  // ranking by training degree, the same queries
  double popularity_map_at_10 = -1;
  int64_t epochs_run = 0;
  double edges_per_second = 0;  // positive training edges per second of training
};

// Needs the dataset's edge splits "train", "valid", "valid_neg", "test", "test_neg" (an lp_*
// import, or io::make_link_splits); `options` carries the encoder, fanouts, optimizer,
// epochs, evaluation cadence, early stopping, checkpoint and metrics log as for node
// classification (batch_size counts positive edges).
LinkResult train_link_prediction(const io::Dataset& dataset, const TrainOptions& options,
                                 const LinkOptions& link);

}  // namespace graphloom::train
