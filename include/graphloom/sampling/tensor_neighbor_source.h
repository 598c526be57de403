// TensorNeighborSource: uniform one-hop neighbor sampling written once over ATen tensor ops,
// so that it runs wherever the graph's tensors live (the CPU, or a CUDA device's memory).
//
// It returns exactly what LocalNeighborSource returns for the same graph, seeds and options:
// every seed draws from the same keyed xoshiro stream (base/random.h), emulated lane by lane in
// int64 tensor arithmetic, and picks by the same algorithms (all neighbors when they fit, Floyd
// up to 64 picks, a partial Fisher-Yates above, Lemire's bounded draws). A batch sampled on a
// GPU can therefore be checked bit for bit against the CPU kernel.
//
// A seed costs one stream and `fanout` draws only when it has more neighbors than the fanout;
// a hub's other edges are never touched. Typed graphs sample each edge type's segment of a
// column with its own fanout (SampleOptions::edge_type_fanouts), in type order from the seed's
// one stream, as the C++ kernel does. Weighted sampling (SampleOptions::weighted) reads the
// graph's alias tables: with replacement, without (up to 64 picks per column: redraws, then
// one draw over fixed-point weights whose integer sums are exact on any device), and fanout
// -1 (every positive weight). Out-edges (SampleOptions::direction) sample the reversed graph,
// placed on the device on first use, as LocalNeighborSource reverses its own. LABOR-0 keeps
// edges by its keyed variates (not batch dependency: OptionError). Temporal sampling
// (SampleOptions::seed_times, a graph sorted by time) binary-searches each segment's usable
// prefix and picks there, uniformly or the latest. Not covered (OptionError): weighted
// sampling without replacement of more than 64 picks per column (logarithms).
//
// Where the CSC lives (CscPlacement): wholly in the device's memory, or "pinned": the arrays of
// one entry per edge (indices, edge ids, alias tables) stay in host memory, registered for
// zero-copy access, and the device's kernels read only the entries a batch picks over the bus
// (GraphBolt's and DGL's UVA sampling); the arrays of one entry per node (indptr, type
// segments) are copied to the device. The graph then needs device memory per node, not per
// edge.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <mutex>
#include <vector>

#include "graphloom/graph/csc_graph.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::sampling {

enum class CscPlacement { kDevice, kPinned };

class TensorNeighborSource : public NeighborSource {
 public:
  // Puts the CSC on `device` as `placement` says (no copy when already there; on the CPU
  // device both placements read the graph's own arrays). Throws OptionError("device") when the
  // device is not available, OptionError("graph_placement") when pinning is not.
  TensorNeighborSource(const graph::CscGraph& graph, c10::Device device,
                       CscPlacement placement = CscPlacement::kDevice);

  int64_t num_nodes() const override { return num_nodes_; }
  // Seeds may live on any device; the result lives on device().
  SampledEdges sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                const SampleOptions& options) const override;
  c10::Device device() const { return device_; }

 private:
  // One direction's CSC on the device.
  struct Csc {
    at::Tensor indptr;     // int64 [num_nodes + 1]
    at::Tensor indices;    // int32 or int64 [num_edges]
    at::Tensor edge_ids;   // int64 [num_edges], or undefined: a pick's id is its position
    at::Tensor edge_time;  // int64 [num_edges] (graph::sorted_by_time), or undefined
    // Typed graphs: each column's segments, one per edge type (empty where the column has no
    // edge of that type): int64 [num_nodes, num_types + 1], starts then the column's end.
    bool typed = false;
    int64_t num_types = 1;
    at::Tensor segment_bounds;
    // With weights: the packed alias tables (graph/weight_alias.h), int64 [num_edges], each
    // segment's count of positive weights, int64 [num_nodes, num_types], and the weights per
    // CSC position (the fallback of picks without replacement); undefined without.
    at::Tensor alias, positive_counts, weights;
  };

  static Csc place(const graph::CscGraph& graph, c10::Device device, CscPlacement placement);
  // The in-edge CSC, or the out-edge one (the reversed graph, placed on first use).
  const Csc& csc_for(EdgeDirection direction) const;
  void draw_picks(const Csc& csc, const at::Tensor& global, const at::Tensor& begin,
                  const at::Tensor& degree, const at::Tensor& available,
                  const std::vector<int64_t>& fanouts, const SampleOptions& options,
                  const at::Tensor& first_slot, at::Tensor& positions) const;

  c10::Device device_;
  CscPlacement placement_;
  int64_t num_nodes_;
  graph::CscGraph host_graph_;  // the in-edge graph, for the out-edge CSC
  Csc in_;
  mutable std::once_flag out_once_;
  mutable Csc out_;
};

}  // namespace graphloom::sampling
