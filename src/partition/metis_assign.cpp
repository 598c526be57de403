// METIS assignment. METIS sees the symmetrized graph without self-loops or repeated neighbors,
// and only the nodes that have an edge in it; the nodes without any edge are placed afterwards,
// where they even out the node and train-node counts. METIS's initial bisection grows regions
// from a fresh start vertex for each disconnected component it meets, and on R-MAT scale 23
// (3.8M of its 8.4M nodes without an edge) it had not finished that phase after 15 minutes.
#include <ATen/ATen.h>
#include <metis.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>
#include <vector>

#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/base/progress.h"
#include "graphloom/base/timer.h"
#include "graphloom/partition/assign.h"

namespace graphloom::partition {
namespace {

// METIS's input, over the nodes that have an edge in it: `nodes[k]` is the graph node of METIS
// vertex k; `isolated` lists the rest in id order.
struct MetisGraph {
  std::vector<idx_t> xadj;
  std::vector<idx_t> adjncy;
  std::vector<int64_t> nodes;
  std::vector<int64_t> isolated;
};

// Both directions of every edge, self-loops dropped, into one array with a start per node
// (one scatter, no symmetric CscGraph: that took 1.7 s of the reference job's 13).
void scatter_both_directions(const graph::CscGraph& graph, std::vector<int64_t>& start,
                             std::vector<idx_t>& entries) {
  const int64_t n = graph.num_nodes;
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  start.assign(static_cast<std::size_t>(n) + 1, 0);
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
}

MetisGraph metis_graph(const graph::CscGraph& graph) {
  const int64_t n = graph.num_nodes;
  std::vector<int64_t> start;
  std::vector<idx_t> entries;
  scatter_both_directions(graph, start, entries);
  // Sort and deduplicate each node's list in place: degree[v] distinct neighbors.
  std::vector<int64_t> degree(static_cast<std::size_t>(n), 0);
#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t v = 0; v < n; ++v) {
    auto* begin = entries.data() + start[v];
    auto* end = entries.data() + start[v + 1];
    std::sort(begin, end);
    degree[v] = std::unique(begin, end) - begin;
  }
  MetisGraph out;
  std::vector<idx_t> vertex_of(static_cast<std::size_t>(n), -1);
  for (int64_t v = 0; v < n; ++v) {
    if (degree[v] == 0) {
      out.isolated.push_back(v);
    } else {
      vertex_of[v] = static_cast<idx_t>(out.nodes.size());
      out.nodes.push_back(v);
    }
  }
  std::vector<int64_t> offset(static_cast<std::size_t>(n) + 1, 0);
  for (int64_t v = 0; v < n; ++v) offset[v + 1] = offset[v] + degree[v];
  GL_CHECK(offset[n] < std::numeric_limits<idx_t>::max(),
           "METIS here uses 32-bit indices and cannot take {} adjacency entries (>= 2^31): "
           "partition with the streaming (or random) method instead",
           offset[n]);
  const auto vertices = static_cast<int64_t>(out.nodes.size());
  out.xadj.resize(static_cast<std::size_t>(vertices) + 1);
  out.adjncy.resize(static_cast<std::size_t>(offset[n]));
  out.xadj[0] = 0;
#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t k = 0; k < vertices; ++k) {
    const int64_t v = out.nodes[k];
    out.xadj[k + 1] = static_cast<idx_t>(offset[v + 1]);
    const idx_t* list = entries.data() + start[v];
    idx_t* to = out.adjncy.data() + offset[v];
    for (int64_t j = 0; j < degree[v]; ++j) to[j] = vertex_of[list[j]];
  }
  return out;
}

// Per-vertex weights, ncon per vertex: node count, then train nodes and in-degree when asked.
// A constraint whose total is zero (no train node has an edge) is left out: METIS divides by
// each constraint's total.
std::vector<idx_t> vertex_weights(const graph::CscGraph& graph, const MetisGraph& metis,
                                  const MetisOptions& options, idx_t& ncon) {
  const bool* train = options.train_mask.defined() ? options.train_mask.data_ptr<bool>() : nullptr;
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  int64_t train_total = 0;
  if (train != nullptr) {
    for (const int64_t v : metis.nodes) train_total += train[v];
  }
  const bool use_train = train_total > 0;
  const bool use_edges = options.balance_edges && graph.num_edges() > 0;
  ncon = 1 + (use_train ? 1 : 0) + (use_edges ? 1 : 0);
  std::vector<idx_t> weights(metis.nodes.size() * static_cast<std::size_t>(ncon), 1);
  for (std::size_t k = 0; k < metis.nodes.size(); ++k) {
    const int64_t v = metis.nodes[k];
    idx_t* w = weights.data() + k * ncon + 1;
    if (use_train) *w++ = train[v] ? 1 : 0;
    if (use_edges) *w++ = static_cast<idx_t>(indptr[v + 1] - indptr[v]);
  }
  return weights;
}

// Places `nodes` one at a time on the part with the fewest nodes so far (train nodes first,
// on the part with the fewest train nodes), counting what `part` already holds: the isolated
// nodes fill what METIS left uneven. Their only edges are self-loops, so the edge balance
// stays METIS's.
void place_by_balance(const std::vector<int64_t>& nodes, const bool* train, int64_t parts,
                      int64_t* part, int64_t num_nodes) {
  std::vector<int64_t> node_load(static_cast<std::size_t>(parts), 0);
  std::vector<int64_t> train_load(static_cast<std::size_t>(parts), 0);
  for (int64_t v = 0; v < num_nodes; ++v) {
    if (part[v] < 0) continue;
    ++node_load[part[v]];
    if (train != nullptr && train[v]) ++train_load[part[v]];
  }
  for (const bool train_pass : {true, false}) {
    if (train_pass && train == nullptr) continue;
    using Entry = std::tuple<int64_t, int64_t, int64_t>;  // (ordering load, node load, part)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> lightest;
    for (int64_t p = 0; p < parts; ++p) {
      lightest.emplace(train_pass ? train_load[p] : node_load[p], node_load[p], p);
    }
    for (const int64_t v : nodes) {
      if (train_pass != (train != nullptr && train[v])) continue;
      const auto [load, nodes_there, p] = lightest.top();
      lightest.pop();
      part[v] = p;
      ++node_load[p];
      lightest.emplace(load + 1, nodes_there + 1, p);
    }
  }
}

// Runs METIS on `metis` into `part` (by graph node).
void run_metis(const graph::CscGraph& graph, MetisGraph& metis, int64_t parts,
               const MetisOptions& options, int64_t* part) {
  idx_t ncon = 1;
  std::vector<idx_t> weights = vertex_weights(graph, metis, options, ncon);
  idx_t options_array[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options_array);
  options_array[METIS_OPTION_SEED] = static_cast<idx_t>(options.seed & 0x7fffffff);
  options_array[METIS_OPTION_NUMBERING] = 0;
  auto nvtxs = static_cast<idx_t>(metis.nodes.size());
  auto nparts = static_cast<idx_t>(parts);
  idx_t objval = 0;
  std::vector<idx_t> vertex_part(metis.nodes.size());
  const bool recursive = resolve_metis_scheme(options.scheme, parts) == MetisScheme::kRecursive;
  const char* name = recursive ? "METIS_PartGraphRecursive" : "METIS_PartGraphKway";
  const auto partition_graph = recursive ? METIS_PartGraphRecursive : METIS_PartGraphKway;
  int status = 0;
  {
    const Heartbeat heartbeat(fmt::format("metis: {}", name));
    status = partition_graph(&nvtxs, &ncon, metis.xadj.data(), metis.adjncy.data(), weights.data(),
                             nullptr, nullptr, &nparts, nullptr, nullptr, options_array, &objval,
                             vertex_part.data());
  }
  GL_CHECK(status == METIS_OK, "{} failed with status {} ({})", name, status,
           status == METIS_ERROR_MEMORY ? "out of memory" : "input or internal error");
  for (std::size_t k = 0; k < metis.nodes.size(); ++k) part[metis.nodes[k]] = vertex_part[k];
}

}  // namespace

at::Tensor assign_metis(const graph::CscGraph& graph, int64_t parts, const MetisOptions& options) {
  const int64_t n = graph.num_nodes;
  check_parts(parts, n);
  if (parts == 1) return at::zeros({n}, at::kLong);
  Timer timer;
  MetisGraph metis = metis_graph(graph);
  spdlog::info(
      "metis: symmetrized graph: {} nodes with edges ({} adjacency entries), {} without "
      "(placed after METIS) ({:.1f} s)",
      metis.nodes.size(), metis.adjncy.size(), metis.isolated.size(), timer.seconds());
  at::Tensor assignment = at::full({n}, -1, at::kLong);
  int64_t* part = assignment.data_ptr<int64_t>();
  if (static_cast<int64_t>(metis.nodes.size()) >= parts) {
    timer.reset();
    run_metis(graph, metis, parts, options, part);
    spdlog::info("metis: {} parts by {} ({:.1f} s)", parts,
                 name_of(resolve_metis_scheme(options.scheme, parts)), timer.seconds());
  } else {
    // Fewer connected nodes than parts: nothing for METIS to cut; all are placed by balance.
    metis.isolated.insert(metis.isolated.end(), metis.nodes.begin(), metis.nodes.end());
    std::sort(metis.isolated.begin(), metis.isolated.end());
  }
  const bool* train = options.train_mask.defined() ? options.train_mask.data_ptr<bool>() : nullptr;
  place_by_balance(metis.isolated, train, parts, part, n);
  return assignment;
}

}  // namespace graphloom::partition
