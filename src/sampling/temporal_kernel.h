// The temporal one-hop kernel (SampleOptions::seed_times), internal to the sampling module:
// sample_csc_neighbors hands it the calls that carry seed times.
#pragma once

#include <ATen/core/Tensor.h>

#include "graphloom/graph/csc_graph.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::sampling {

// graphloom::Error (OptionError naming the field where an option is at fault) unless the
// temporal call can be served: seed_times int64 [num_seeds], a graph sorted by time, and no
// weights, LABOR or replacement with the `last` strategy.
void check_temporal_request(const graph::CscGraph& graph, const at::Tensor& seeds,
                            const SampleOptions& options);

// Picks, for each seed (a column id, range-checked by the caller), among the prefix of its
// column whose edge_time is <= the seed's time: `fanout` uniformly (with or without
// replacement) or the `fanout` latest. Streams are keyed as in the plain kernel. On a typed
// graph each edge-type segment's prefix takes its type's fanout (edge_type_fanouts).
SampledEdges sample_temporal_csc(const graph::CscGraph& graph, const at::Tensor& seeds,
                                 int64_t fanout, const SampleOptions& options);

}  // namespace graphloom::sampling
