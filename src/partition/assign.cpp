// Part assignment. METIS sees a symmetric adjacency (it requires one); random assignment
// permutes a balanced round-robin so part sizes differ by at most one.
#include "graphloom/partition/assign.h"

#include <ATen/ATen.h>
#include <metis.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/base/timer.h"

namespace graphloom::partition {

MetisScheme resolve_metis_scheme(MetisScheme scheme, int64_t parts) {
  if (scheme != MetisScheme::kAuto) return scheme;
  return parts <= 8 ? MetisScheme::kRecursive : MetisScheme::kKway;
}

std::string metis_scheme_name(MetisScheme scheme) {
  GL_CHECK(scheme != MetisScheme::kAuto, "metis_scheme_name needs a resolved scheme");
  return scheme == MetisScheme::kRecursive ? "recursive" : "kway";
}

namespace {

// METIS's input: the symmetrized graph without self-loops or repeated neighbors, written
// straight into its int32 arrays (one scatter, one in-place sort per vertex) rather than
// through a symmetric CscGraph, which took 1.7 s of the reference job's 13.
void symmetric_adjacency(const graph::CscGraph& graph, std::vector<idx_t>& xadj,
                         std::vector<idx_t>& adjncy) {
  const int64_t n = graph.num_nodes;
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  std::vector<int64_t> start(static_cast<std::size_t>(n) + 1, 0);
  std::vector<idx_t> entries;
  dispatch_index_type(graph.indices.scalar_type(), "graph indices", [&](auto tag) {
    const auto* indices = graph.indices.data_ptr<decltype(tag)>();
    for (int64_t v = 0; v < n; ++v) {
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
        if (indices[e] != v) ++start[v + 1], ++start[static_cast<std::size_t>(indices[e]) + 1];
      }
    }
    for (int64_t v = 0; v < n; ++v) start[v + 1] += start[v];
    entries.resize(static_cast<std::size_t>(start[n]));
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t v = 0; v < n; ++v) {
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
        const int64_t u = indices[e];
        if (u == v) continue;
        entries[next[v]++] = static_cast<idx_t>(u);
        entries[next[u]++] = static_cast<idx_t>(v);
      }
    }
  });
  // Sort and deduplicate each vertex's list in place; its distinct count goes to kept[v].
  std::vector<int64_t> kept(static_cast<std::size_t>(n) + 1, 0);
#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t v = 0; v < n; ++v) {
    auto* begin = entries.data() + start[v];
    auto* end = entries.data() + start[v + 1];
    std::sort(begin, end);
    kept[v + 1] = std::unique(begin, end) - begin;
  }
  for (int64_t v = 0; v < n; ++v) kept[v + 1] += kept[v];
  GL_CHECK(kept[n] < std::numeric_limits<idx_t>::max(),
           "METIS here uses 32-bit indices and cannot take {} adjacency entries (>= 2^31): use "
           "--method stream (or random)",
           kept[n]);
  xadj.resize(static_cast<std::size_t>(n) + 1);
  adjncy.resize(static_cast<std::size_t>(kept[n]));
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v <= n; ++v) xadj[v] = static_cast<idx_t>(kept[v]);
#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t v = 0; v < n; ++v) {
    std::copy(entries.data() + start[v], entries.data() + start[v] + (kept[v + 1] - kept[v]),
              adjncy.data() + kept[v]);
  }
}

}  // namespace

at::Tensor assign_metis(const graph::CscGraph& graph, int64_t parts, const MetisOptions& options) {
  const int64_t n = graph.num_nodes;
  GL_CHECK(parts >= 1 && parts <= n, "--parts must be in [1, num_nodes = {}], got {}", n, parts);
  if (parts == 1) return at::zeros({n}, at::kLong);
  // METIS's own int32 copy of the symmetric adjacency (its scratch is freed before METIS runs).
  Timer timer;
  std::vector<idx_t> xadj;
  std::vector<idx_t> adjncy;
  symmetric_adjacency(graph, xadj, adjncy);
  spdlog::debug("metis: symmetric adjacency of {} entries built in {:.1f} s", adjncy.size(),
                timer.seconds());
  timer.reset();
  // Constraints: node count, then optionally train nodes and in-degree.
  idx_t ncon = 1 + (options.train_mask.defined() ? 1 : 0) + (options.balance_edges ? 1 : 0);
  std::vector<idx_t> weights(static_cast<std::size_t>(n * ncon), 1);
  if (ncon > 1) {
    const at::Tensor degree = graph.in_degrees();
    const int64_t* deg = degree.data_ptr<int64_t>();
    const bool* train =
        options.train_mask.defined() ? options.train_mask.data_ptr<bool>() : nullptr;
    for (int64_t v = 0; v < n; ++v) {
      idx_t c = 1;
      if (train != nullptr) weights[v * ncon + c++] = train[v] ? 1 : 0;
      if (options.balance_edges) weights[v * ncon + c++] = static_cast<idx_t>(deg[v]);
    }
  }
  idx_t options_array[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options_array);
  options_array[METIS_OPTION_SEED] = static_cast<idx_t>(options.seed & 0x7fffffff);
  options_array[METIS_OPTION_NUMBERING] = 0;
  idx_t nvtxs = static_cast<idx_t>(n);
  idx_t nparts = static_cast<idx_t>(parts);
  idx_t objval = 0;
  std::vector<idx_t> part(static_cast<std::size_t>(n));
  const bool recursive = resolve_metis_scheme(options.scheme, parts) == MetisScheme::kRecursive;
  const auto partition_graph = recursive ? METIS_PartGraphRecursive : METIS_PartGraphKway;
  const int status =
      partition_graph(&nvtxs, &ncon, xadj.data(), adjncy.data(), weights.data(), nullptr, nullptr,
                      &nparts, nullptr, nullptr, options_array, &objval, part.data());
  GL_CHECK(status == METIS_OK, "{} failed with status {} ({})",
           recursive ? "METIS_PartGraphRecursive" : "METIS_PartGraphKway", status,
           status == METIS_ERROR_MEMORY ? "out of memory" : "input or internal error");
  spdlog::debug("metis: {} ran in {:.1f} s", recursive ? "recursive bisection" : "k-way",
                timer.seconds());
  at::Tensor out = at::empty({n}, at::kLong);
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t v = 0; v < n; ++v) o[v] = part[v];
  return out;
}

at::Tensor assign_stream(const graph::CscGraph& graph, int64_t parts,
                         const StreamOptions& options) {
  const int64_t n = graph.num_nodes;
  GL_CHECK(parts >= 1 && parts <= n, "--parts must be in [1, num_nodes = {}], got {}", n, parts);
  GL_CHECK(options.algorithm == "ldg" || options.algorithm == "fennel",
           "--stream-algorithm must be 'ldg' or 'fennel', got '{}'", options.algorithm);
  GL_CHECK(options.slack >= 0, "stream slack must be >= 0, got {}", options.slack);
  const auto capacity = static_cast<int64_t>(
      std::ceil(static_cast<double>(n) / static_cast<double>(parts) * (1 + options.slack)));
  const bool ldg = options.algorithm == "ldg";
  const double gamma = 1.5;
  const double alpha = std::sqrt(static_cast<double>(parts)) *
                       static_cast<double>(graph.num_edges()) /
                       std::pow(static_cast<double>(n), gamma);
  at::Tensor assignment = at::full({n}, -1, at::kLong);
  int64_t* part = assignment.data_ptr<int64_t>();
  std::vector<int64_t> size(static_cast<std::size_t>(parts), 0);
  std::vector<int64_t> neighbors(static_cast<std::size_t>(parts), 0);
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  dispatch_index_type(graph.indices.scalar_type(), "graph indices", [&](auto tag) {
    using Index = decltype(tag);
    const Index* indices = graph.indices.data_ptr<Index>();
    for (int64_t v = 0; v < n; ++v) {
      std::fill(neighbors.begin(), neighbors.end(), 0);
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
        const int64_t p = part[indices[e]];
        if (p >= 0) ++neighbors[p];
      }
      int64_t best = -1;
      double best_score = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < parts; ++i) {
        if (size[i] >= capacity) continue;
        const double load = static_cast<double>(size[i]);
        const double score =
            ldg ? static_cast<double>(neighbors[i]) * (1.0 - load / static_cast<double>(capacity))
                : static_cast<double>(neighbors[i]) - alpha * gamma * std::sqrt(load);
        // Ties go to the least loaded part, so isolated nodes spread evenly.
        if (score > best_score || (score == best_score && size[i] < size[best])) {
          best = i;
          best_score = score;
        }
      }
      part[v] = best;
      ++size[best];
    }
  });
  return assignment;
}

at::Tensor assign_random(int64_t num_nodes, int64_t parts, uint64_t seed) {
  GL_CHECK(parts >= 1 && parts <= num_nodes, "--parts must be in [1, num_nodes = {}], got {}",
           num_nodes, parts);
  at::Tensor out = at::arange(num_nodes, at::kLong).remainder(parts);
  int64_t* p = out.data_ptr<int64_t>();
  RandomStream rng(stream_key({seed, 0x9a87}));
  for (int64_t i = num_nodes - 1; i > 0; --i) std::swap(p[i], p[rng.uniform(i + 1)]);
  return out;
}

int64_t edge_cut(const graph::CscGraph& graph, const at::Tensor& assignment) {
  GL_CHECK(assignment.numel() == graph.num_nodes && assignment.scalar_type() == at::kLong,
           "assignment must be int64 [num_nodes]");
  const int64_t* part = assignment.data_ptr<int64_t>();
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  return dispatch_index_type(graph.indices.scalar_type(), "graph indices", [&](auto tag) {
    const auto* indices = graph.indices.data_ptr<decltype(tag)>();
    int64_t cut = 0;
#pragma omp parallel for schedule(static) reduction(+ : cut)
    for (int64_t v = 0; v < graph.num_nodes; ++v) {
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) cut += part[indices[e]] != part[v];
    }
    return cut;
  });
}

}  // namespace graphloom::partition
