// LABOR-* (labor_importance.h): the importance-sampling rounds over a call's candidate edges and
// the hop that keeps edges by them, in float64: on the host in loops over rows, on a device
// (or when asked) in tensor ops over all rows at once.
#include "graphloom/sampling/labor_importance.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "graphloom/base/error.h"
#include "tensor_random_streams.h"

namespace graphloom::sampling {
namespace {

// Relative tolerance of a row's variance equation and of the rounds' progress (DGL's).
constexpr double kTolerance = 1e-4;
// Fixed-point steps per round: a row whose degree barely exceeds its fanout converges slowest
// (each step shrinks its error by fanout / degree).
constexpr int kMaxSolveSteps = 200;
// Typed keys are node * types + type, with node ids below 2^31 (the sampler's bound).
constexpr int64_t kMaxEdgeTypes = int64_t{1} << 24;

// Row r of each edge.
at::Tensor row_of_edges(const CandidateRows& rows) {
  const at::Tensor degree = rows.indptr.slice(0, 1) - rows.indptr.slice(0, 0, -1);
  return at::repeat_interleave(degree, std::optional<int64_t>(rows.keys.numel()));
}

// Whether the expected number of nodes stopped falling (no nodes at all counts as settled).
bool converged(double expected, double before) { return expected >= (1 - kTolerance) * before; }

// What the rounds read: the rows, each edge's node (dense ids), which rows solve for their c and
// the variance each must keep.
struct RoundInputs {
  const CandidateRows& rows;
  at::Tensor edge_row;      // int64 [edges]: each edge's row
  at::Tensor node_of_edge;  // int64 [edges], in [0, num_nodes)
  int64_t num_nodes;
  at::Tensor active;  // bool [rows]
  at::Tensor target;  // float64 [rows]
  int64_t limit;      // rounds at most
};

// Solves row r's c for sum over its edges of 1 / min(1, c pi) = target, starting from `c`, by
// the fixed point c *= sum / target (DGL's iteration); `pi` holds the row's edges' pi.
double solve_row(double c, const std::vector<double>& pi, double target) {
  for (int step = 0; step < kMaxSolveSteps; ++step) {
    double sum = 0;
    for (const double value : pi) sum += 1 / std::min(1.0, c * value);
    const double ratio = sum / target;
    c *= ratio;
    if (std::min(ratio, 1 / ratio) >= 1 - kTolerance) break;
  }
  return c;
}

// The rounds on the host, in loops over rows: pi_t *= max of c over the rows reaching t (an
// atomic maximum per edge), then each row solves its c on a copy of its edges' pi.
void rounds_on_host(const RoundInputs& in, at::Tensor& c, at::Tensor& pi) {
  const int64_t num_rows = in.rows.fanouts.numel();
  const int64_t* begin = in.rows.indptr.data_ptr<int64_t>();
  const int64_t* node = in.node_of_edge.data_ptr<int64_t>();
  const bool* active = in.active.data_ptr<bool>();
  const double* target = in.target.data_ptr<double>();
  double* constant = c.data_ptr<double>();
  double* node_pi = pi.data_ptr<double>();
  std::vector<double> highest(static_cast<std::size_t>(in.num_nodes));
  double expected_before = std::numeric_limits<double>::infinity();
  for (int64_t round = 0; round < in.limit; ++round) {
    std::fill(highest.begin(), highest.end(), 0.0);
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t r = 0; r < num_rows; ++r) {
      const double value = constant[r];
      for (int64_t e = begin[r]; e < begin[r + 1]; ++e) {
        std::atomic_ref<double> slot(highest[static_cast<std::size_t>(node[e])]);
        double seen = slot.load(std::memory_order_relaxed);
        while (value > seen &&
               !slot.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
        }
      }
    }
    double expected = 0;
#pragma omp parallel for schedule(static) reduction(+ : expected)
    for (int64_t t = 0; t < in.num_nodes; ++t) {
      node_pi[t] *= highest[static_cast<std::size_t>(t)];
      expected += std::min(1.0, node_pi[t]);
    }
#pragma omp parallel
    {
      std::vector<double> row_pi;
#pragma omp for schedule(dynamic, 64)
      for (int64_t r = 0; r < num_rows; ++r) {
        if (!active[r]) continue;
        row_pi.clear();
        for (int64_t e = begin[r]; e < begin[r + 1]; ++e) row_pi.push_back(node_pi[node[e]]);
        constant[r] = solve_row(constant[r], row_pi, target[r]);
      }
    }
    if (converged(expected, expected_before)) break;
    expected_before = expected;
  }
}

// The same rounds in tensor ops (any device): every row steps at once over all the edges.
void rounds_with_tensor_ops(const RoundInputs& in, at::Tensor& c, at::Tensor& pi) {
  const at::Tensor& edge_row = in.edge_row;
  const at::Tensor target_or_one = at::where(in.active, in.target, at::ones_like(in.target));
  double expected_before = std::numeric_limits<double>::infinity();
  for (int64_t round = 0; round < in.limit; ++round) {
    const at::Tensor highest = at::zeros_like(pi).scatter_reduce_(
        0, in.node_of_edge, c.index_select(0, edge_row), "amax", /*include_self=*/false);
    pi = pi * highest;
    const at::Tensor edge_pi = pi.index_select(0, in.node_of_edge);
    for (int step = 0; step < kMaxSolveSteps; ++step) {
      const at::Tensor p = (c.index_select(0, edge_row) * edge_pi).clamp_max(1.0);
      const at::Tensor sum = at::zeros_like(c).index_add_(0, edge_row, p.reciprocal());
      const at::Tensor ratio = at::where(in.active, sum / target_or_one, at::ones_like(sum));
      c = c * ratio;
      if (at::minimum(ratio, ratio.reciprocal()).min().item<double>() >= 1 - kTolerance) break;
    }
    const double expected = pi.clamp_max(1.0).sum().item<double>();
    if (converged(expected, expected_before)) break;
    expected_before = expected;
  }
}

// Each key's index among the distinct keys (in [0, count)): by a presence table and its prefix
// sum where the keys are small (node ids), else by sorting them.
std::pair<at::Tensor, int64_t> dense_ids(const at::Tensor& keys) {
  const int64_t edges = keys.numel();
  const int64_t top = keys.max().item<int64_t>() + 1;
  if (top <= 4 * edges + (int64_t{1} << 20)) {
    const at::Tensor rank = at::zeros({top}, keys.options()).index_fill_(0, keys, 1).cumsum(0);
    return {rank.index_select(0, keys) - 1, rank[top - 1].item<int64_t>()};
  }
  const auto unique = at::_unique2(keys, /*sorted=*/false, /*return_inverse=*/true);
  return {std::get<1>(unique), std::get<0>(unique).numel()};
}

// u_t of each node: on the host any LABOR (batch dependency too), on a device the keyed uniforms.
at::Tensor variates_of(const LaborVariates& labor, const at::Tensor& nodes) {
  if (!nodes.is_cpu()) {
    if (labor.blend) {
      throw OptionError("batch_dependency",
                        "LABOR's batch dependency (normal variates through erfc) is not in the "
                        "device (tensor-op) sampler: use 1, or sample on the host");
    }
    return keyed_uniform_real(labor.key, nodes);
  }
  const at::Tensor ids = nodes.contiguous();
  at::Tensor u = at::empty({ids.numel()}, ids.options().dtype(at::kDouble));
  const int64_t* id = ids.data_ptr<int64_t>();
  double* out = u.data_ptr<double>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ids.numel(); ++i) out[i] = labor_variate(labor, id[i]);
  return u;
}

// The candidate edges' rows: per seed, or on typed graphs per (seed, edge type) run.
CandidateRows candidate_rows(const SampledEdges& all, int64_t fanout,
                             const std::vector<int64_t>& type_fanouts) {
  const at::Tensor per_seed = all.indptr.slice(0, 1) - all.indptr.slice(0, 0, -1);
  if (!all.edge_types.defined()) {
    return {all.indptr, all.neighbors, at::full_like(per_seed, fanout)};
  }
  const int64_t edges = all.neighbors.numel();
  const at::Tensor seed = at::repeat_interleave(per_seed, std::optional<int64_t>(edges));
  const at::Tensor& type = all.edge_types;
  at::Tensor starts = at::ones({edges}, type.options().dtype(at::kBool));
  if (edges > 1) {
    starts.slice(0, 1).copy_(seed.slice(0, 1)
                                 .ne(seed.slice(0, 0, -1))
                                 .logical_or(type.slice(0, 1).ne(type.slice(0, 0, -1))));
  }
  const at::Tensor first = starts.nonzero().squeeze(1);
  // Types come from the source (a graph server's reply): bounded before they size a table and
  // scale node ids. A source returns no type without a fanout, so none past type_fanouts.
  const int64_t low = edges > 0 ? type.min().item<int64_t>() : 0;
  const int64_t high = edges > 0 ? type.max().item<int64_t>() : 0;
  const int64_t type_limit =
      type_fanouts.empty() ? kMaxEdgeTypes : static_cast<int64_t>(type_fanouts.size());
  GL_CHECK_AS(RangeError, low >= 0 && high < type_limit,
              "LABOR-*: candidate edge type {} is outside [0, {})", low < 0 ? low : high,
              type_limit);
  const int64_t num_types = std::max<int64_t>(static_cast<int64_t>(type_fanouts.size()), high + 1);
  at::Tensor fanout_of_type = at::full({num_types}, fanout, type.options());
  if (!type_fanouts.empty()) {
    fanout_of_type.zero_()
        .narrow(0, 0, static_cast<int64_t>(type_fanouts.size()))
        .copy_(at::tensor(type_fanouts, at::kLong));
  }
  return {at::cat({first, at::full({1}, edges, first.options())}), all.neighbors * num_types + type,
          fanout_of_type.index_select(0, type.index_select(0, first))};
}

}  // namespace

at::Tensor labor_inclusion_probabilities(const CandidateRows& rows, int64_t rounds,
                                         LaborSolver solver) {
  GL_CHECK(rows.indptr.numel() == rows.fanouts.numel() + 1,
           "candidate rows: indptr has {} entries for {} rows", rows.indptr.numel(),
           rows.fanouts.numel());
  const at::Tensor edge_row = row_of_edges(rows);
  const at::Tensor degree = (rows.indptr.slice(0, 1) - rows.indptr.slice(0, 0, -1)).to(at::kDouble);
  const at::Tensor fanout = rows.fanouts.to(at::kDouble);
  const at::Tensor keep_all = rows.fanouts.lt(0);
  // LABOR-0's c = fanout / d (above 1 where d < fanout: the whole row), infinite for -1.
  at::Tensor c = at::where(keep_all, at::full_like(degree, std::numeric_limits<double>::infinity()),
                           fanout / degree.clamp_min(1));
  if (rounds == 0 || rows.keys.numel() == 0) return c.index_select(0, edge_row).clamp_max(1.0);

  const auto [node_of_edge, num_nodes] = dense_ids(rows.keys);
  // Rows that solve for c: those that sample (fanout > 0) and have edges.
  const RoundInputs in{
      .rows = rows,
      .edge_row = edge_row,
      .node_of_edge = node_of_edge.contiguous(),
      .num_nodes = num_nodes,
      .active = rows.fanouts.gt(0).logical_and(degree.gt(0)).contiguous(),
      .target = (degree * degree / at::minimum(fanout, degree).clamp_min(1)).contiguous(),
      .limit = rounds < 0 ? kMaxImportanceRounds : rounds};
  at::Tensor pi = at::ones({num_nodes}, degree.options());
  c = c.contiguous();
  if (c.is_cpu() && solver == LaborSolver::kAuto) {
    rounds_on_host(in, c, pi);
  } else {
    rounds_with_tensor_ops(in, c, pi);
  }
  return (c.index_select(0, edge_row) * pi.index_select(0, node_of_edge))
      .nan_to_num(0.0)  // 0 * inf: a row of fanout 0 (c = 0) at a node a whole row reaches
      .clamp_max(1.0);
}

namespace {

// The kept candidates of `all` (u_t < p), with each one's 1 / p scaled so that its row's weights
// sum to the row's kept edges: in tensor ops (any device).
SampledEdges keep_with_tensor_ops(const SampledEdges& all, const CandidateRows& rows,
                                  const at::Tensor& p, const LaborVariates& labor) {
  const at::Tensor keep = variates_of(labor, all.neighbors).lt(p);
  const at::Tensor edge_row = row_of_edges(rows);
  const at::Tensor kept = keep.to(at::kDouble);
  const at::Tensor inverse = kept / p.clamp_min(std::numeric_limits<double>::min());
  const int64_t num_rows = rows.fanouts.numel();
  const at::Tensor row_kept = at::zeros({num_rows}, p.options()).index_add_(0, edge_row, kept);
  const at::Tensor row_sum = at::zeros({num_rows}, p.options()).index_add_(0, edge_row, inverse);
  const at::Tensor scale = row_kept / row_sum.clamp_min(std::numeric_limits<double>::min());
  const at::Tensor weights = inverse * scale.index_select(0, edge_row);

  const at::Tensor per_seed = all.indptr.slice(0, 1) - all.indptr.slice(0, 0, -1);
  const at::Tensor seed_of_edge =
      at::repeat_interleave(per_seed, std::optional<int64_t>(all.neighbors.numel()));
  SampledEdges out;
  const at::Tensor counts =
      at::zeros_like(per_seed).index_add_(0, seed_of_edge, keep.to(at::kLong));
  out.indptr = at::cat({at::zeros({1}, counts.options()), at::cumsum(counts, 0)});
  out.neighbors = all.neighbors.masked_select(keep);
  if (all.edge_ids.defined()) out.edge_ids = all.edge_ids.masked_select(keep);
  if (all.edge_types.defined()) out.edge_types = all.edge_types.masked_select(keep);
  out.weights = weights.masked_select(keep).to(at::kFloat);
  return out;
}

// The same on the host in two passes over the rows (decide and sum, then write), where the
// tensor ops take a dozen passes over every candidate.
SampledEdges keep_on_host(const SampledEdges& all, const CandidateRows& rows, const at::Tensor& p,
                          const LaborVariates& labor) {
  const int64_t num_rows = rows.fanouts.numel();
  const int64_t num_seeds = all.indptr.numel() - 1;
  const int64_t* row_begin = rows.indptr.data_ptr<int64_t>();
  const int64_t* neighbor = all.neighbors.data_ptr<int64_t>();
  const double* probability = p.data_ptr<double>();
  std::vector<uint8_t> keep(static_cast<std::size_t>(all.neighbors.numel()));
  std::vector<int64_t> row_offset(static_cast<std::size_t>(num_rows + 1), 0);
  std::vector<double> row_scale(static_cast<std::size_t>(num_rows), 0.0);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t r = 0; r < num_rows; ++r) {
    int64_t kept = 0;
    double inverse = 0;
    for (int64_t e = row_begin[r]; e < row_begin[r + 1]; ++e) {
      keep[e] = labor_variate(labor, neighbor[e]) < probability[e];
      if (keep[e] == 0) continue;
      ++kept;
      inverse += 1 / probability[e];
    }
    row_offset[r + 1] = kept;
    row_scale[r] = kept > 0 ? static_cast<double>(kept) / inverse : 0.0;
  }
  for (int64_t r = 0; r < num_rows; ++r) row_offset[r + 1] += row_offset[r];
  const int64_t total = row_offset[num_rows];

  SampledEdges out;
  out.neighbors = at::empty({total}, at::kLong);
  out.weights = at::empty({total}, at::kFloat);
  if (all.edge_ids.defined()) out.edge_ids = at::empty({total}, at::kLong);
  if (all.edge_types.defined()) out.edge_types = at::empty({total}, at::kLong);
  const int64_t* edge_id = all.edge_ids.defined() ? all.edge_ids.data_ptr<int64_t>() : nullptr;
  const int64_t* type = all.edge_types.defined() ? all.edge_types.data_ptr<int64_t>() : nullptr;
  int64_t* out_neighbor = out.neighbors.data_ptr<int64_t>();
  float* out_weight = out.weights.data_ptr<float>();
  int64_t* out_id = edge_id != nullptr ? out.edge_ids.data_ptr<int64_t>() : nullptr;
  int64_t* out_type = type != nullptr ? out.edge_types.data_ptr<int64_t>() : nullptr;
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t r = 0; r < num_rows; ++r) {
    int64_t at = row_offset[r];
    for (int64_t e = row_begin[r]; e < row_begin[r + 1]; ++e) {
      if (keep[e] == 0) continue;
      out_neighbor[at] = neighbor[e];
      out_weight[at] = static_cast<float>(row_scale[r] / probability[e]);
      if (out_id != nullptr) out_id[at] = edge_id[e];
      if (out_type != nullptr) out_type[at] = type[e];
      ++at;
    }
  }
  // A seed's picks start where its first candidate's would (rows never straddle seeds).
  out.indptr = at::empty({num_seeds + 1}, at::kLong);
  int64_t* indptr = out.indptr.data_ptr<int64_t>();
  const int64_t* seed_begin = all.indptr.data_ptr<int64_t>();
  int64_t row = 0;
  for (int64_t s = 0; s <= num_seeds; ++s) {
    while (row < num_rows && row_begin[row] < seed_begin[s]) ++row;
    indptr[s] = row_offset[row];
  }
  return out;
}

}  // namespace

SampledEdges sample_labor_importance(const NeighborSource& source, const at::Tensor& seeds,
                                     int64_t fanout, const SampleOptions& options, int64_t rounds,
                                     LaborSolver solver) {
  GL_CHECK(options.labor.enabled, "LABOR-* needs LABOR's variates (SampleOptions::labor)");
  SampleOptions every = options;
  every.labor = {};
  for (int64_t& type_fanout : every.edge_type_fanouts) type_fanout = type_fanout == 0 ? 0 : -1;
  const SampledEdges all = source.sample_neighbors(seeds, -1, every);

  const CandidateRows rows = candidate_rows(all, fanout, options.edge_type_fanouts);
  const at::Tensor p = labor_inclusion_probabilities(rows, rounds, solver).contiguous();
  return all.neighbors.is_cpu() && solver == LaborSolver::kAuto
             ? keep_on_host(all, rows, p, options.labor)
             : keep_with_tensor_ops(all, rows, p, options.labor);
}

}  // namespace graphloom::sampling
