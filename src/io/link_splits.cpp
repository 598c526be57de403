// Link splits over 64-bit pair keys (u * N + v): sorted key arrays answer "is this an edge?"
// by binary search with 8 bytes per edge.
#include "graphloom/io/link_splits.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/transforms.h"

namespace graphloom::io {
namespace {

std::vector<int64_t> sorted_keys(const at::Tensor& src, const at::Tensor& dst, int64_t n) {
  const at::Tensor keys = std::get<0>(at::sort(src * n + dst)).contiguous();
  return {keys.data_ptr<int64_t>(), keys.data_ptr<int64_t>() + keys.numel()};
}

bool contains(const std::vector<int64_t>& keys, int64_t key) {
  return std::binary_search(keys.begin(), keys.end(), key);
}

}  // namespace

graph::CscGraph graph_of_pairs(const at::Tensor& pairs, int64_t num_nodes, bool both_directions) {
  GL_CHECK(pairs.dim() == 2 && pairs.size(1) == 2, "node pairs must be [M, 2], got {}",
           pairs.sizes());
  at::Tensor src = pairs.select(1, 0).to(at::kLong);
  at::Tensor dst = pairs.select(1, 1).to(at::kLong);
  if (both_directions) {
    src = at::cat({src, dst});
    dst = at::cat({pairs.select(1, 1).to(at::kLong), pairs.select(1, 0).to(at::kLong)});
  }
  graph::CooInput input;
  input.src = src.contiguous();
  input.dst = dst.contiguous();
  input.num_nodes = num_nodes;
  input.keep_edge_ids = false;
  return graph::dedupe(graph::csc_from_coo(input));
}

Dataset make_link_splits(const Dataset& dataset, const LinkSplitOptions& options) {
  GL_CHECK(options.valid_fraction >= 0 && options.test_fraction >= 0 &&
               options.valid_fraction + options.test_fraction < 1,
           "link split fractions must be >= 0 and leave training edges (valid {}, test {})",
           options.valid_fraction, options.test_fraction);
  const int64_t n = dataset.num_nodes();
  const graph::CscGraph& graph = dataset.graph;
  const at::Tensor src = graph.indices.to(at::kLong);
  const at::Tensor dst = graph.destinations();
  // Candidate positives: every edge once (each undirected pair as u < v), no self-loops.
  const at::Tensor keep = dataset.directed ? src != dst : src < dst;
  const at::Tensor unique_keys =
      std::get<0>(at::_unique(src.masked_select(keep) * n + dst.masked_select(keep)));
  const int64_t m = unique_keys.numel();
  const auto valid = static_cast<int64_t>(options.valid_fraction * static_cast<double>(m));
  const auto test = static_cast<int64_t>(options.test_fraction * static_cast<double>(m));
  GL_CHECK(m - valid - test > 0, "'{}' has {} candidate edges: too few to split", dataset.name, m);
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  const at::Tensor shuffled = unique_keys.index_select(0, at::randperm(m, generator, at::kLong));
  auto pairs_of = [n](const at::Tensor& keys) {
    return at::stack({at::floor_divide(keys, n), at::remainder(keys, n)}, 1);
  };
  Dataset out = dataset;
  out.edge_splits.clear();
  out.edge_split_times.clear();  // they belonged to the pairs replaced here
  out.edge_splits["valid"] = pairs_of(shuffled.slice(0, 0, valid));
  out.edge_splits["test"] = pairs_of(shuffled.slice(0, valid, valid + test));
  out.edge_splits["train"] = pairs_of(shuffled.slice(0, valid + test));

  // Negatives: uniform pairs that are no edge in either direction, distinct, no self-loops.
  const std::vector<int64_t> edges = sorted_keys(at::cat({src, dst}), at::cat({dst, src}), n);
  std::vector<int64_t> negatives;
  std::vector<int64_t> taken;
  RandomStream rng(stream_key({options.seed, 0x6e6567ULL}));
  const int64_t wanted = valid + test;
  int64_t attempts = 0;
  while (static_cast<int64_t>(negatives.size()) < wanted) {
    GL_CHECK(++attempts < 100 * (wanted + 10),
             "'{}' is too dense to sample {} non-edges for the link splits", dataset.name, wanted);
    auto u = static_cast<int64_t>(rng.uniform(n));
    auto v = static_cast<int64_t>(rng.uniform(n));
    if (u == v) continue;
    if (!dataset.directed && u > v) std::swap(u, v);
    const int64_t key = u * n + v;
    if (contains(edges, key)) continue;
    const auto at = std::lower_bound(taken.begin(), taken.end(), key);
    if (at != taken.end() && *at == key) continue;
    taken.insert(at, key);
    negatives.push_back(key);
  }
  const at::Tensor negative_keys = at::tensor(negatives, at::kLong);
  out.edge_splits["valid_neg"] = pairs_of(negative_keys.slice(0, 0, valid));
  out.edge_splits["test_neg"] = pairs_of(negative_keys.slice(0, valid));

  // Message passing sees every edge except the held-out ones, in both directions.
  const at::Tensor held_pairs = at::cat({out.edge_splits["valid"], out.edge_splits["test"]});
  const std::vector<int64_t> held =
      sorted_keys(held_pairs.select(1, 0), held_pairs.select(1, 1), n);
  std::vector<uint8_t> kept(static_cast<std::size_t>(src.numel()));
  const int64_t* s = src.data_ptr<int64_t>();
  const at::Tensor dst_contiguous = dst.contiguous();
  const int64_t* d = dst_contiguous.data_ptr<int64_t>();
  for (int64_t e = 0; e < src.numel(); ++e) {
    kept[e] = !contains(held, s[e] * n + d[e]) && !contains(held, d[e] * n + s[e]);
  }
  const at::Tensor mask = at::from_blob(kept.data(), {src.numel()}, at::kByte).to(at::kBool);
  graph::CooInput input;
  input.src = src.masked_select(mask);
  input.dst = dst.masked_select(mask);
  if (graph.weights.defined()) input.weights = graph.weights.masked_select(mask);
  input.num_nodes = n;
  input.keep_edge_ids = false;
  out.graph = graph::csc_from_coo(input);
  return out;
}

}  // namespace graphloom::io
