// What a link-prediction task ranks, and its full-ranking evaluation. On a homogeneous graph
// every node is a candidate; on a typed graph the edge splits hold pairs of one edge type and
// only nodes of its destination type are candidates (negatives, Recall@K against all items).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "graphloom/graph/schema.h"
#include "graphloom/io/dataset.h"

namespace graphloom::train {

struct LinkTarget {
  at::Tensor candidates;    // int64, sorted: the ids destinations (and negatives) are drawn from
  bool symmetric = false;   // undirected homogeneous graph: either endpoint may be the query
  std::string description;  // for messages, e.g. "user -> movie pairs, 9742 movie candidates"
};

// The target of `edge_splits` (name -> int64 [M, 2] pairs). `node_type` (int64 [num_nodes])
// names each node's type on a typed graph (undefined: homogeneous, every node a candidate);
// every pair of every split must then join the same (source type, destination type), else
// graphloom::Error names the split.
LinkTarget link_target(const std::map<std::string, at::Tensor>& edge_splits,
                       const at::Tensor& node_type, const graph::GraphSchema& schema,
                       int64_t num_nodes, bool directed);
LinkTarget link_target(const io::Dataset& dataset);

// One score per pair of embedding rows; v_ids are the destination rows' node ids.
using PairScorer =
    std::function<at::Tensor(const at::Tensor& u, const at::Tensor& v, const at::Tensor& v_ids)>;

struct RankingFigures {
  double recall_at_20 = -1;  // -1: too many queries x candidates to rank in full (> 5e7)
  double map_at_10 = -1;
  double popularity_recall_at_20 = -1;  // ranking candidates by their training pair count
  double popularity_map_at_10 = -1;
  // Ranking by the training pairs' summed weights (full_ranking's train_weights; -1 without).
  double weighted_popularity_recall_at_20 = -1;
  double weighted_popularity_map_at_10 = -1;
  int64_t queries = 0;
};

struct FullRanking {
  RankingFigures all;   // every query
  RankingFigures warm;  // queries with at least one training pair (temporal splits have cold
                        // ones, whose embedding nothing trained)
};

// Each query (source of a test positive, or either endpoint when symmetric) ranks every
// candidate except its training and validation partners (and itself); relevant are its test
// partners. Popularity ranks candidates by how often they appear in training pairs, and, when
// `train_weights` (one per training pair) is given, also by their pairs' summed weights (the
// recency-weighted popularity of time-aware training). `edge_splits` needs "train", "valid"
// and "test".
FullRanking full_ranking(const PairScorer& score, const at::Tensor& embeddings,
                         const std::map<std::string, at::Tensor>& edge_splits,
                         const LinkTarget& target, const at::Tensor& train_weights = {});

}  // namespace graphloom::train
