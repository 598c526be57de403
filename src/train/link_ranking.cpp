// Link targets (which pairs, which candidates) and full ranking of every candidate per query.
#include "graphloom/train/link_ranking.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <tuple>
#include <utility>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/graph/schema.h"
#include "graphloom/train/link_metrics.h"
#include "graphloom/train/link_priors.h"

namespace graphloom::train {

LinkTarget link_target(const std::map<std::string, at::Tensor>& edge_splits,
                       const at::Tensor& node_type, const graph::GraphSchema& schema,
                       int64_t num_nodes, bool directed) {
  LinkTarget target;
  if (!node_type.defined()) {
    target.candidates = at::arange(num_nodes, at::kLong);
    target.symmetric = !directed;
    target.description = fmt::format("all {} nodes", num_nodes);
    return target;
  }
  int64_t src_type = -1;
  int64_t dst_type = -1;
  for (const auto& [name, pairs] : edge_splits) {
    if (pairs.size(0) == 0) continue;
    const at::Tensor src = node_type.index_select(0, pairs.select(1, 0));
    const at::Tensor dst = node_type.index_select(0, pairs.select(1, 1));
    if (src_type < 0) {
      src_type = src[0].item<int64_t>();
      dst_type = dst[0].item<int64_t>();
    }
    GL_CHECK((src == src_type).all().item<bool>() && (dst == dst_type).all().item<bool>(),
             "edge split '{}' mixes node types: link prediction on a typed graph ranks pairs of "
             "one (source type, destination type), here {} -> {}",
             name, schema.node_types[static_cast<std::size_t>(src_type)],
             schema.node_types[static_cast<std::size_t>(dst_type)]);
  }
  GL_CHECK(dst_type >= 0, "the edge splits hold no pairs");
  target.candidates = (node_type == dst_type).nonzero().squeeze(1);
  const auto& names = schema.node_types;
  target.description =
      fmt::format("{} -> {} pairs, {} {} candidates", names[static_cast<std::size_t>(src_type)],
                  names[static_cast<std::size_t>(dst_type)], target.candidates.numel(),
                  names[static_cast<std::size_t>(dst_type)]);
  return target;
}

LinkTarget link_target(const io::Dataset& dataset) {
  const at::Tensor node_type =
      dataset.schema.empty()
          ? at::Tensor()
          : graph::node_types_of(dataset.graph, at::arange(dataset.num_nodes(), at::kLong));
  return link_target(dataset.edge_splits, node_type, dataset.schema, dataset.num_nodes(),
                     dataset.directed);
}

FullRanking full_ranking(const PairScorer& score, const at::Tensor& embeddings,
                         const std::map<std::string, at::Tensor>& edge_splits,
                         const LinkTarget& target, const at::Tensor& train_weights) {
  const int64_t n = embeddings.size(0);
  const int64_t candidates = target.candidates.numel();
  // Candidate position of every node id (-1: not a candidate).
  std::vector<int64_t> position(static_cast<std::size_t>(n), -1);
  const int64_t* candidate = target.candidates.data_ptr<int64_t>();
  for (int64_t i = 0; i < candidates; ++i) position[candidate[i]] = i;
  // Partner lists per query node, in candidate positions.
  std::vector<std::vector<int64_t>> relevant(n), excluded(n);
  std::vector<bool> trained(static_cast<std::size_t>(n), false);  // has a training pair
  auto add_pairs = [&](const at::Tensor& pairs, std::vector<std::vector<int64_t>>& lists) {
    const at::Tensor both = pairs.contiguous();
    const int64_t* p = both.data_ptr<int64_t>();
    for (int64_t i = 0; i < both.size(0); ++i) {
      const int64_t u = p[2 * i];
      const int64_t v = p[2 * i + 1];
      GL_CHECK(position[v] >= 0, "pair ({}, {}): {} is not a candidate destination", u, v, v);
      lists[u].push_back(position[v]);
      if (target.symmetric) lists[v].push_back(position[u]);
    }
  };
  const at::Tensor& train = edge_splits.at("train");
  add_pairs(edge_splits.at("test"), relevant);
  add_pairs(train, excluded);
  for (int64_t v = 0; v < n; ++v) trained[v] = !excluded[v].empty();
  add_pairs(edge_splits.at("valid"), excluded);
  std::vector<int64_t> queries;
  for (int64_t v = 0; v < n; ++v) {
    if (relevant[v].empty()) continue;
    queries.push_back(v);
    if (position[v] >= 0) excluded[v].push_back(position[v]);
  }
  const at::Tensor candidate_rows = embeddings.index_select(0, target.candidates);
  const at::Tensor& candidate_ids = target.candidates;
  // Candidates' training pair counts, and summed training pair weights.
  const auto popularity = [&](const at::Tensor& weights) {
    return pair_weight_totals(train, weights, n, target.symmetric)
        .index_select(0, candidate_ids)
        .to(at::kFloat)
        .unsqueeze(0);
  };
  const at::Tensor popular = popularity({});
  const at::Tensor weighted_popular =
      train_weights.defined() ? popularity(train_weights) : at::Tensor();
  // Figures over the queries that pass `keep`.
  auto figures = [&](auto&& keep) {
    RankingFigures out;
    std::vector<std::vector<int64_t>> query_relevant, query_excluded;
    std::vector<int64_t> kept;
    for (const int64_t v : queries) {
      if (!keep(v)) continue;
      kept.push_back(v);
      query_relevant.push_back(relevant[v]);
      query_excluded.push_back(excluded[v]);
    }
    const auto q = static_cast<int64_t>(kept.size());
    out.queries = q;
    if (q == 0 || static_cast<double>(q) * static_cast<double>(candidates) > 5e7) return out;
    at::Tensor scores = at::empty({q, candidates}, at::kFloat);
    for (int64_t i = 0; i < q; ++i) {
      const int64_t v = kept[static_cast<std::size_t>(i)];
      scores[i].copy_(score(embeddings[v].expand({candidates, embeddings.size(1)}), candidate_rows,
                            candidate_ids));
    }
    // Recall@20 and MAP@10 of one score matrix.
    const auto rank = [&](const at::Tensor& by) {
      return std::pair{ranking_at_k(by, query_relevant, query_excluded, 20).recall,
                       ranking_at_k(by, query_relevant, query_excluded, 10).map};
    };
    std::tie(out.recall_at_20, out.map_at_10) = rank(scores);
    std::tie(out.popularity_recall_at_20, out.popularity_map_at_10) =
        rank(popular.expand({q, candidates}));
    if (weighted_popular.defined()) {
      std::tie(out.weighted_popularity_recall_at_20, out.weighted_popularity_map_at_10) =
          rank(weighted_popular.expand({q, candidates}));
    }
    return out;
  };
  FullRanking result;
  result.all = figures([](int64_t) { return true; });
  result.warm = figures([&](int64_t v) { return trained[v]; });
  return result;
}

}  // namespace graphloom::train
