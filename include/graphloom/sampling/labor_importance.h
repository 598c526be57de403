// LABOR-* (Balin & Catalyurek, NeurIPS 2023, section 3.3; GraphBolt's and DGL's
// `importance_sampling`): LABOR with per-node probabilities pi_t optimized over a whole
// sampling call, so that neighbors shared by many seeds are kept more often and the others less,
// at the variance of neighbor sampling. Unlike LABOR-0 it is not a per-seed decision: pi_t
// depends on every seed that reaches t, so it runs over the candidate edges of the call, read
// from any NeighborSource (a local graph, a partition, graph servers) and decided where the
// sampler runs, in tensor ops (any device).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::sampling {

// The candidate edges of one call in rows: each row a seed's edges (of one edge type on typed
// graphs), which keeps `fanout` of them in expectation.
struct CandidateRows {
  at::Tensor indptr;   // int64 [rows + 1]
  at::Tensor keys;     // int64 [edges]: who each edge reaches (the node; on typed graphs the
                       // node and the edge type: pi is per type, as DGL samples each type apart)
  at::Tensor fanouts;  // int64 [rows]: -1 keeps the whole row, 0 none of it
};

// How the rows' constants are solved: on the host row by row until each converges (kAuto on
// the CPU), or all rows stepping together in tensor ops (kAuto on a device; kTensorOps tests
// that path on the host).
enum class LaborSolver { kAuto, kTensorOps };

// Each candidate edge's inclusion probability p = min(1, c_s pi_t) after `rounds` rounds
// (negative: until converged, at most kMaxImportanceRounds). Each round sets pi_t *= max of
// c_s over the rows reaching t, then solves each row's c_s for the variance of picking
// min(fanout, degree) of its d edges uniformly (the paper's equation 22:
// sum_t 1 / min(1, c_s pi_t) = d^2 / min(fanout, d)). Zero rounds: LABOR-0's min(1, fanout / d).
// float64 [edges].
at::Tensor labor_inclusion_probabilities(const CandidateRows& rows, int64_t rounds,
                                         LaborSolver solver = LaborSolver::kAuto);

// One hop of LABOR-*: every in-edge of `seeds` (per edge type with options.edge_type_fanouts)
// read from `source`, kept where its source's variate u_t (options.labor) is below its
// probability, with SampledEdges::weights = 1 / p scaled to sum to each row's kept edges.
// `fanout` as sample_neighbors takes it; options.labor must be enabled. `solver` as above (the
// host decides in loops over rows, a device in tensor ops).
SampledEdges sample_labor_importance(const NeighborSource& source, const at::Tensor& seeds,
                                     int64_t fanout, const SampleOptions& options, int64_t rounds,
                                     LaborSolver solver = LaborSolver::kAuto);

}  // namespace graphloom::sampling
