// Synthetic dataset generators. Every random draw comes from a stream keyed by
// (seed, purpose, index), so output is identical whatever the thread count.
#include "graphloom/io/generators.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/transforms.h"

namespace graphloom::io {
namespace {

// Checks one option: the CLI names it by its flag, Python by its keyword.
void require(bool ok, const char* field, const std::string& detail) {
  if (!ok) throw OptionError(field, detail);
}

enum Purpose : uint64_t { kClass = 1, kEdges, kCentroids, kFeatures, kSplits, kLabels, kPermute };

// A random permutation of 0..n-1 (Fisher-Yates on one stream: sequential, O(n)).
at::Tensor random_permutation(int64_t n, uint64_t seed, Purpose purpose) {
  at::Tensor perm = at::arange(n, at::kLong);
  int64_t* p = perm.data_ptr<int64_t>();
  RandomStream rng(stream_key({seed, purpose}));
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.uniform(i + 1)]);
  return perm;
}

// Disjoint random train/valid/test node sets of the given fractions, each sorted.
std::map<std::string, at::Tensor> random_splits(int64_t n, double train, double valid, double test,
                                                uint64_t seed) {
  GL_CHECK(train >= 0 && valid >= 0 && test >= 0 && train + valid + test <= 1.0 + 1e-9,
           "split fractions must be non-negative and sum to at most 1 (got {}, {}, {})", train,
           valid, test);
  const at::Tensor perm = random_permutation(n, seed, kSplits);
  const auto n_train = static_cast<int64_t>(n * train);
  const auto n_valid = static_cast<int64_t>(n * valid);
  const auto n_test = std::min(n - n_train - n_valid, static_cast<int64_t>(n * test));
  auto take = [&](int64_t begin, int64_t count) {
    return std::get<0>(at::sort(perm.slice(0, begin, begin + count)));
  };
  return {{"train", take(0, n_train)},
          {"valid", take(n_train, n_valid)},
          {"test", take(n_train + n_valid, n_test)}};
}

}  // namespace

Dataset generate_planted(const PlantedOptions& o) {
  require(o.num_nodes > 0, "num_nodes", fmt::format("must be positive, got {}", o.num_nodes));
  require(o.num_classes >= 2 && o.num_classes <= o.num_nodes, "num_classes",
          fmt::format("must be in [2, `num_nodes` = {}], got {}", o.num_nodes, o.num_classes));
  require(o.avg_degree >= 0, "avg_degree", fmt::format("must be >= 0, got {}", o.avg_degree));
  require(o.homophily >= 0 && o.homophily <= 1, "homophily",
          fmt::format("must be in [0, 1], got {}", o.homophily));
  require(o.feat_dim > 0, "feat_dim", fmt::format("must be positive, got {}", o.feat_dim));
  const int64_t n = o.num_nodes;
  const int64_t c = o.num_classes;

  // Classes, and the members of each class (a counting sort of the nodes by class).
  at::Tensor labels = at::empty({n}, at::kLong);
  int64_t* label = labels.data_ptr<int64_t>();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    RandomStream rng(stream_key({o.seed, kClass, static_cast<uint64_t>(v)}));
    label[v] = static_cast<int64_t>(rng.uniform(c));
  }
  const at::Tensor by_class =
      std::get<1>(at::sort(labels, /*stable=*/c10::optional<bool>(true), /*dim=*/0));
  const at::Tensor class_offset =
      at::cat({at::zeros({1}, at::kLong), at::cumsum(at::bincount(labels, {}, c), 0)});
  const int64_t* member = by_class.data_ptr<int64_t>();
  const int64_t* offset = class_offset.data_ptr<int64_t>();

  // Edges: k per node, each added in both directions.
  const auto k = static_cast<int64_t>(std::llround(o.avg_degree / 2));
  at::Tensor src = at::empty({2 * n * k}, at::kLong);
  at::Tensor dst = at::empty({2 * n * k}, at::kLong);
  int64_t* s = src.data_ptr<int64_t>();
  int64_t* d = dst.data_ptr<int64_t>();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    RandomStream rng(stream_key({o.seed, kEdges, static_cast<uint64_t>(v)}));
    for (int64_t j = 0; j < k; ++j) {
      int64_t u;
      if (rng.uniform_real() < o.homophily) {
        const int64_t cls = label[v];
        u = member[offset[cls] + static_cast<int64_t>(rng.uniform(offset[cls + 1] - offset[cls]))];
      } else {
        u = static_cast<int64_t>(rng.uniform(n));
      }
      const int64_t e = v * k + j;
      s[e] = v;
      d[e] = u;
      s[n * k + e] = u;
      d[n * k + e] = v;
    }
  }
  graph::CooInput input{.src = src, .dst = dst, .num_nodes = n, .keep_edge_ids = false};
  graph::CscGraph graph = graph::dedupe(graph::remove_self_loops(graph::csc_from_coo(input)));
  graph.edge_ids = at::Tensor();  // the generated edges have no other numbering

  // Features: centroid of the node's class plus isotropic noise.
  at::Tensor centroids = at::empty({c, o.feat_dim}, at::kFloat);
  float* centroid = centroids.data_ptr<float>();
  RandomStream centroid_rng(stream_key({o.seed, kCentroids}));
  for (int64_t i = 0; i < c * o.feat_dim; ++i)
    centroid[i] = static_cast<float>(centroid_rng.normal());
  at::Tensor features = at::empty({n, o.feat_dim}, at::kFloat);
  float* feature = features.data_ptr<float>();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    RandomStream rng(stream_key({o.seed, kFeatures, static_cast<uint64_t>(v)}));
    const float* center = centroid + label[v] * o.feat_dim;
    for (int64_t j = 0; j < o.feat_dim; ++j) {
      feature[v * o.feat_dim + j] = center[j] + static_cast<float>(o.feature_noise * rng.normal());
    }
  }

  Dataset dataset;
  dataset.name = "planted";
  dataset.directed = false;
  dataset.graph = std::move(graph);
  dataset.node_features["feat"] = features;
  dataset.labels = labels;
  dataset.num_classes = c;
  dataset.splits = random_splits(n, o.train_fraction, o.valid_fraction, o.test_fraction, o.seed);
  return dataset;
}

Dataset generate_typed_planted(const TypedPlantedOptions& o) {
  require(o.num_items > 0, "num_items", fmt::format("must be positive, got {}", o.num_items));
  require(o.num_users > 0, "num_users", fmt::format("must be positive, got {}", o.num_users));
  require(o.num_classes >= 2 && o.num_classes <= o.num_items, "num_classes",
          fmt::format("must be in [2, `num_items` = {}], got {}", o.num_items, o.num_classes));
  require(o.likes_per_user >= 0, "likes_per_user",
          fmt::format("must be >= 0, got {}", o.likes_per_user));
  require(o.related_per_item >= 0, "related_per_item",
          fmt::format("must be >= 0, got {}", o.related_per_item));
  require(o.preference >= 0 && o.preference <= 1, "preference",
          fmt::format("must be in [0, 1], got {}", o.preference));
  const int64_t items = o.num_items;
  const int64_t users = o.num_users;
  const int64_t c = o.num_classes;
  enum Relation : int8_t { kLikes, kLikedBy, kRelated };

  // Items get a class; items of class k are the ids with id % c == k, so no sort is needed.
  at::Tensor labels = at::full({items + users}, -1, at::kLong);
  int64_t* label = labels.data_ptr<int64_t>();
  for (int64_t v = 0; v < items; ++v) label[v] = v % c;

  const int64_t likes = users * o.likes_per_user;
  const int64_t related = items * o.related_per_item;
  const int64_t m = 2 * likes + 2 * related;
  at::Tensor src = at::empty({m}, at::kLong);
  at::Tensor dst = at::empty({m}, at::kLong);
  at::Tensor types = at::empty({m}, at::kChar);
  int64_t* s = src.data_ptr<int64_t>();
  int64_t* d = dst.data_ptr<int64_t>();
  int8_t* t = types.data_ptr<int8_t>();
  auto add_pair = [&](int64_t e, int64_t a, int64_t b, int8_t forward, int8_t backward,
                      int64_t half) {
    s[e] = a, d[e] = b, t[e] = forward;
    s[e + half] = b, d[e + half] = a, t[e + half] = backward;
  };
#pragma omp parallel for schedule(static)
  for (int64_t u = 0; u < users; ++u) {
    RandomStream rng(stream_key({o.seed, kEdges, static_cast<uint64_t>(u)}));
    const auto preferred = static_cast<int64_t>(rng.uniform(c));
    const int64_t in_class = (items - preferred + c - 1) / c;  // ids preferred, preferred + c, ...
    for (int64_t j = 0; j < o.likes_per_user; ++j) {
      const int64_t item = rng.uniform_real() < o.preference
                               ? preferred + c * static_cast<int64_t>(rng.uniform(in_class))
                               : static_cast<int64_t>(rng.uniform(items));
      add_pair(u * o.likes_per_user + j, items + u, item, kLikes, kLikedBy, likes);
    }
  }
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < items; ++v) {
    RandomStream rng(stream_key({o.seed, kClass, static_cast<uint64_t>(v)}));
    for (int64_t j = 0; j < o.related_per_item; ++j) {
      const auto other = static_cast<int64_t>(rng.uniform(items));
      add_pair(2 * likes + v * o.related_per_item + j, v, other, kRelated, kRelated, related);
    }
  }
  graph::CooInput input{.src = src, .dst = dst, .num_nodes = items + users, .keep_edge_ids = false};
  input.edge_types = types;

  // Items: class centroid plus noise; users: noise of the same scale (no class evidence).
  at::Tensor centroids = at::empty({c, o.feat_dim}, at::kFloat);
  float* centroid = centroids.data_ptr<float>();
  RandomStream centroid_rng(stream_key({o.seed, kCentroids}));
  for (int64_t i = 0; i < c * o.feat_dim; ++i)
    centroid[i] = static_cast<float>(centroid_rng.normal());
  at::Tensor features = at::empty({items + users, o.feat_dim}, at::kFloat);
  float* feature = features.data_ptr<float>();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < items + users; ++v) {
    RandomStream rng(stream_key({o.seed, kFeatures, static_cast<uint64_t>(v)}));
    for (int64_t j = 0; j < o.feat_dim; ++j) {
      const float center = v < items ? centroid[label[v] * o.feat_dim + j] : 0.0F;
      feature[v * o.feat_dim + j] = center + static_cast<float>(o.feature_noise * rng.normal());
    }
  }

  Dataset dataset;
  dataset.name = "typed-planted";
  dataset.directed = true;
  dataset.graph = graph::csc_from_coo(input);
  dataset.graph.node_type_offset = at::tensor({int64_t{0}, items, items + users}, at::kLong);
  dataset.schema.node_types = {"item", "user"};
  dataset.schema.edge_types = {
      {"user", "likes", "item"}, {"item", "liked_by", "user"}, {"item", "related", "item"}};
  dataset.node_features["feat"] = features;
  dataset.labels = labels;
  dataset.num_classes = c;
  // Item ids are 0..items-1, so splits over the first `items` ids cover the items only.
  dataset.splits =
      random_splits(items, o.train_fraction, o.valid_fraction, o.test_fraction, o.seed);
  return dataset;
}

Dataset generate_rmat(const RmatOptions& o) {
  require(o.scale >= 1 && o.scale <= 40, "scale",
          fmt::format("must be in [1, 40], got {}", o.scale));
  require(o.edge_factor >= 1, "edge_factor", fmt::format("must be >= 1, got {}", o.edge_factor));
  GL_CHECK(o.a > 0 && o.b >= 0 && o.c >= 0 && o.a + o.b + o.c < 1,
           "R-MAT probabilities need a > 0, b, c >= 0 and a + b + c < 1 (got {}, {}, {})", o.a, o.b,
           o.c);
  const int64_t n = int64_t{1} << o.scale;
  const int64_t m = o.edge_factor * n;
  const at::Tensor perm = random_permutation(n, o.seed, kPermute);
  const int64_t* p = perm.data_ptr<int64_t>();

  at::Tensor src = at::empty({m}, at::kLong);
  at::Tensor dst = at::empty({m}, at::kLong);
  int64_t* s = src.data_ptr<int64_t>();
  int64_t* d = dst.data_ptr<int64_t>();
  constexpr int64_t kChunk = 1 << 16;  // fixed chunks: one stream each, any thread count
  const int64_t num_chunks = (m + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(dynamic, 4)
  for (int64_t chunk = 0; chunk < num_chunks; ++chunk) {
    RandomStream rng(stream_key({o.seed, kEdges, static_cast<uint64_t>(chunk)}));
    const int64_t end = std::min(m, (chunk + 1) * kChunk);
    for (int64_t e = chunk * kChunk; e < end; ++e) {
      int64_t row = 0;
      int64_t col = 0;
      for (int bit = 0; bit < o.scale; ++bit) {
        const double r = rng.uniform_real();
        const bool right = (r >= o.a && r < o.a + o.b) || r >= o.a + o.b + o.c;
        const bool down = r >= o.a + o.b;
        row |= static_cast<int64_t>(down) << bit;
        col |= static_cast<int64_t>(right) << bit;
      }
      s[e] = p[row];
      d[e] = p[col];
    }
  }
  graph::CooInput input{.src = src, .dst = dst, .num_nodes = n, .keep_edge_ids = false};
  Dataset dataset;
  dataset.name = fmt::format("rmat-{}", o.scale);
  dataset.directed = true;
  dataset.graph = graph::csc_from_coo(input);
  src = at::Tensor();
  dst = at::Tensor();

  at::Tensor features = at::empty({n, o.feat_dim}, at::kFloat);
  at::Tensor labels = at::empty({n}, at::kLong);
  float* feature = features.data_ptr<float>();
  int64_t* label = labels.data_ptr<int64_t>();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    RandomStream rng(stream_key({o.seed, kFeatures, static_cast<uint64_t>(v)}));
    for (int64_t j = 0; j < o.feat_dim; ++j)
      feature[v * o.feat_dim + j] = static_cast<float>(rng.normal());
    label[v] = static_cast<int64_t>(rng.uniform(o.num_classes));
  }
  dataset.node_features["feat"] = features;
  dataset.labels = labels;
  dataset.num_classes = o.num_classes;
  dataset.splits = random_splits(n, o.train_fraction, o.train_fraction, o.train_fraction, o.seed);
  return dataset;
}

}  // namespace graphloom::io
