// Vose's alias method per segment: scale the weights to a mean of 1, then pair every
// under-full position with an over-full one that tops it up, until all are full.
#include "graphloom/graph/weight_alias.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/base/huge_pages.h"

namespace graphloom::graph {
namespace {

// Writes the alias table of weight[0, degree) to table[0, degree); returns whether every
// weight is positive.
template <typename Weight>
bool build_segment(const Weight* weight, int64_t degree, int64_t* table) {
  thread_local std::vector<double> scaled;
  thread_local std::vector<int32_t> small, large;
  scaled.resize(degree);
  small.clear();
  large.clear();
  double total = 0;
  bool all_positive = true;
  for (int64_t j = 0; j < degree; ++j) {
    all_positive = all_positive && weight[j] > 0;  // NaN is not
    total += weight[j] > 0 ? static_cast<double>(weight[j]) : 0;
  }
  if (!(total > 0)) {  // nothing to pick: the sampler never draws here (count() is 0)
    for (int64_t j = 0; j < degree; ++j) table[j] = pack_alias_entry({0.f, 0});
    return false;
  }
  for (int64_t j = 0; j < degree; ++j) {
    scaled[j] = weight[j] > 0 ? static_cast<double>(weight[j]) * degree / total : 0.0;
    (scaled[j] < 1.0 ? small : large).push_back(static_cast<int32_t>(j));
  }
  while (!small.empty() && !large.empty()) {
    const int32_t under = small.back();
    small.pop_back();
    const int32_t over = large.back();
    table[under] = pack_alias_entry({static_cast<float>(scaled[under]), over});
    scaled[over] -= 1.0 - scaled[under];
    if (scaled[over] < 1.0) {
      large.pop_back();
      small.push_back(over);
    }
  }
  // What remains is full up to rounding. A remaining "small" one must still never keep a
  // weight-0 position: it stands for a positive one instead.
  int32_t positive = 0;
  while (!(weight[positive] > 0)) ++positive;
  for (const int32_t j : large) table[j] = pack_alias_entry({1.f, j});
  for (const int32_t j : small) {
    table[j] = weight[j] > 0 ? pack_alias_entry({1.f, j}) : pack_alias_entry({0.f, positive});
  }
  // keep > 0 exactly for positive weights (the sampler counts positive edges by it): a tiny
  // weight, or rounding in the top-ups, must not leave a positive position at keep 0.
  for (int64_t j = 0; j < degree; ++j) {
    AliasEntry entry = unpack_alias_entry(table[j]);
    entry.keep =
        weight[j] > 0 ? std::max(entry.keep, std::numeric_limits<float>::denorm_min()) : 0.f;
    table[j] = pack_alias_entry(entry);
  }
  return all_positive;
}

}  // namespace

CscGraph with_weight_alias(const CscGraph& graph) {
  CscGraph out = graph;
  out.weight_alias = at::Tensor();
  out.weight_alias_all_positive = false;
  if (!graph.has_weights()) return out;
  const int64_t edges = graph.num_edges();
  GL_CHECK(graph.weights.numel() == edges,
           "edge weights: expected {} values (one per edge), got {}", edges, graph.weights.numel());
  GL_CHECK(graph.in_degrees().max().item<int64_t>() <= std::numeric_limits<int32_t>::max(),
           "edge weights: a column has more than 2^31 edges, too many for its alias table");
  out.weight_alias = empty_on_huge_pages({edges}, at::kLong);  // read at random
  int64_t* table = out.weight_alias.data_ptr<int64_t>();
  const at::Tensor indptr = graph.indptr.contiguous();
  const int64_t* ptr = indptr.data_ptr<int64_t>();
  // Typed graphs: one table per run of equal edge types in a column.
  const at::Tensor types =
      graph.type_per_edge.defined() ? graph.type_per_edge.to(at::kLong).contiguous() : at::Tensor();
  const int64_t* type = types.defined() ? types.data_ptr<int64_t>() : nullptr;
  out.weight_alias_all_positive =
      dispatch_float_type(graph.weights.scalar_type(), "edge weights", [&](auto tag) {
        using Weight = decltype(tag);
        const at::Tensor weights = graph.weights.contiguous();
        const Weight* w = weights.data_ptr<Weight>();
        bool all_positive = true;
#pragma omp parallel for schedule(dynamic, 1024) reduction(&& : all_positive)
        for (int64_t v = 0; v < graph.num_nodes; ++v) {
          for (int64_t begin = ptr[v]; begin < ptr[v + 1];) {
            int64_t end = ptr[v + 1];
            if (type != nullptr) {
              end = begin + 1;
              while (end < ptr[v + 1] && type[end] == type[begin]) ++end;
            }
            all_positive = build_segment(w + begin, end - begin, table + begin) && all_positive;
            begin = end;
          }
        }
        return all_positive;
      });
  return out;
}

}  // namespace graphloom::graph
