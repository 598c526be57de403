// NeighborSource over an in-memory (or memory-mapped) CscGraph.
#pragma once

#include <memory>
#include <mutex>

#include "graphloom/graph/csc_graph.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::sampling {

class LocalNeighborSource : public NeighborSource {
 public:
  explicit LocalNeighborSource(graph::CscGraph graph);

  int64_t num_nodes() const override { return graph_.num_nodes; }
  SampledEdges sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                const SampleOptions& options) const override;
  const graph::CscGraph& graph() const { return graph_; }

 private:
  // Out-edge sampling reads the reverse graph, built on first use.
  const graph::CscGraph& out_graph() const;
  // The graph a request reads: its direction's, with alias tables if it is weighted
  // (built on the first weighted request, unless the graph came with them).
  const graph::CscGraph& graph_for(const SampleOptions& options) const;

  graph::CscGraph graph_;
  mutable std::once_flag out_graph_once_;
  mutable graph::CscGraph out_graph_;
  mutable std::once_flag weighted_once_[2];  // in, out
  mutable graph::CscGraph weighted_[2];
};

// The sampling kernel on one CSC (exposed for the benchmarks and for server-side sampling).
SampledEdges sample_csc_neighbors(const graph::CscGraph& graph, const at::Tensor& seeds,
                                  int64_t fanout, const SampleOptions& options);

}  // namespace graphloom::sampling
