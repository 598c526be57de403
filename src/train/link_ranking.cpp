// Link targets (which pairs, which candidates) and full ranking of every candidate per query.
#include "graphloom/train/link_ranking.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/graph/schema.h"
#include "graphloom/train/link_metrics.h"

namespace graphloom::train {

LinkTarget link_target(const io::Dataset& dataset) {
  LinkTarget target;
  if (dataset.schema.empty()) {
    target.candidates_end = dataset.num_nodes();
    target.symmetric = !dataset.directed;
    target.description = fmt::format("all {} nodes", dataset.num_nodes());
    return target;
  }
  int64_t src_type = -1;
  int64_t dst_type = -1;
  for (const auto& [name, pairs] : dataset.edge_splits) {
    if (pairs.size(0) == 0) continue;
    const at::Tensor src = graph::node_types_of(dataset.graph, pairs.select(1, 0).contiguous());
    const at::Tensor dst = graph::node_types_of(dataset.graph, pairs.select(1, 1).contiguous());
    if (src_type < 0) {
      src_type = src[0].item<int64_t>();
      dst_type = dst[0].item<int64_t>();
    }
    GL_CHECK((src == src_type).all().item<bool>() && (dst == dst_type).all().item<bool>(),
             "edge split '{}' mixes node types: link prediction on a typed graph ranks pairs of "
             "one (source type, destination type), here {} -> {}",
             name, dataset.schema.node_types[static_cast<std::size_t>(src_type)],
             dataset.schema.node_types[static_cast<std::size_t>(dst_type)]);
  }
  GL_CHECK(dst_type >= 0, "dataset '{}' has no edge-split pairs", dataset.name);
  const at::Tensor offset = dataset.graph.node_type_offset;
  target.candidates_begin = offset[dst_type].item<int64_t>();
  target.candidates_end = offset[dst_type + 1].item<int64_t>();
  const auto& names = dataset.schema.node_types;
  target.description = fmt::format(
      "{} -> {} pairs, {} {} candidates", names[static_cast<std::size_t>(src_type)],
      names[static_cast<std::size_t>(dst_type)], target.candidates_end - target.candidates_begin,
      names[static_cast<std::size_t>(dst_type)]);
  return target;
}

FullRanking full_ranking(const PairScorer& score, const at::Tensor& embeddings,
                         const std::map<std::string, at::Tensor>& edge_splits,
                         const LinkTarget& target) {
  const int64_t n = embeddings.size(0);
  const int64_t begin = target.candidates_begin;
  const int64_t candidates = target.candidates_end - begin;
  // Partner lists per query node, in candidate positions (id - begin).
  std::vector<std::vector<int64_t>> relevant(n), excluded(n);
  std::vector<bool> trained(static_cast<std::size_t>(n), false);  // has a training pair
  std::vector<double> popularity(static_cast<std::size_t>(candidates), 0.0);
  auto add_pairs = [&](const at::Tensor& pairs, std::vector<std::vector<int64_t>>* lists,
                       bool count) {
    const at::Tensor both = pairs.contiguous();
    const int64_t* p = both.data_ptr<int64_t>();
    for (int64_t i = 0; i < both.size(0); ++i) {
      const int64_t u = p[2 * i];
      const int64_t v = p[2 * i + 1];
      if (lists != nullptr) (*lists)[u].push_back(v - begin);
      if (count) popularity[static_cast<std::size_t>(v - begin)] += 1;
      if (!target.symmetric) continue;
      if (lists != nullptr) (*lists)[v].push_back(u - begin);
      if (count) popularity[static_cast<std::size_t>(u - begin)] += 1;
    }
  };
  add_pairs(edge_splits.at("test"), &relevant, false);
  add_pairs(edge_splits.at("train"), &excluded, true);
  for (int64_t v = 0; v < n; ++v) trained[v] = !excluded[v].empty();
  add_pairs(edge_splits.at("valid"), &excluded, false);
  std::vector<int64_t> queries;
  for (int64_t v = 0; v < n; ++v) {
    if (relevant[v].empty()) continue;
    queries.push_back(v);
    if (v >= begin && v < target.candidates_end) excluded[v].push_back(v - begin);
  }
  const at::Tensor candidate_rows = embeddings.slice(0, begin, target.candidates_end);
  const at::Tensor candidate_ids = at::arange(begin, target.candidates_end, at::kLong);
  const at::Tensor popular = at::tensor(popularity, at::kDouble).to(at::kFloat).unsqueeze(0);
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
    const at::Tensor popular_scores = popular.expand({q, candidates});
    out.recall_at_20 = ranking_at_k(scores, query_relevant, query_excluded, 20).recall;
    out.map_at_10 = ranking_at_k(scores, query_relevant, query_excluded, 10).map;
    out.popularity_recall_at_20 =
        ranking_at_k(popular_scores, query_relevant, query_excluded, 20).recall;
    out.popularity_map_at_10 = ranking_at_k(popular_scores, query_relevant, query_excluded, 10).map;
    return out;
  };
  FullRanking result;
  result.all = figures([](int64_t) { return true; });
  result.warm = figures([&](int64_t v) { return trained[v]; });
  return result;
}

}  // namespace graphloom::train
