// Multi-layer neighbor sampling (DGL's NeighborSampler, GraphBolt's sample_neighbor stage):
// seeds -> one Block per layer, written once against NeighborSource.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphloom/graph/schema.h"
#include "graphloom/sampling/block.h"
#include "graphloom/sampling/neighbor_source.h"
#include "graphloom/sampling/relabel.h"

namespace graphloom::sampling {

struct NeighborSamplerOptions {
  // fanouts[l] picks per node for blocks[l] (blocks[0] is the input layer, as in DGL); -1 = all.
  std::vector<int64_t> fanouts;
  // Typed graphs: edge_type_fanouts[l][r] picks per node of edge type r for blocks[l] (-1 =
  // all). Empty: fanouts[l] for every edge type.
  std::vector<std::vector<int64_t>> edge_type_fanouts;
  bool replace = false;
  bool weighted = false;
  EdgeDirection direction = EdgeDirection::kIn;
  uint64_t seed = 0;
  // Keep each block's global edge ids. Without edge features or held-out edges nothing reads
  // them, and a batch's first block holds as many as it has edges (~8 MB at 1M edges).
  bool edge_ids = true;
  // kLabor: LABOR-0 (labor.h) in every layer, LABOR-* with labor.importance_sampling
  // (labor_importance.h); needs replace = false and weighted = false.
  SamplingMethod method = SamplingMethod::kNeighbor;
  LaborOptions labor;
  // Sample each node's neighbors once, at the hop that first reached it (PyG's NeighborLoader):
  // a block's destinations reached at an earlier hop get no in-edges, so nothing is sampled
  // that PyG's layout (pyg_edges) would drop, and no node enters a batch only through such
  // picks. Off (DGL's blocks): every block samples all its destinations, which layer-wise
  // models need.
  bool each_node_once = false;
  // Temporal batches (sample() with seed times): which of a node's usable edges it picks.
  TemporalStrategy temporal_strategy = TemporalStrategy::kUniform;
};

class NeighborSampler {
 public:
  // `source` must outlive the sampler. Throws graphloom::Error on empty or invalid fanouts.
  NeighborSampler(const NeighborSource* source, NeighborSamplerOptions options);

  // Samples the blocks of one mini-batch. Random streams are keyed by
  // (seed, epoch, batch, layer, node): the same arguments always give the same batch. LABOR's
  // variates drop the layer with layer_dependency and take batch / batch_dependency.
  // Thread-safe: several loader workers may call it at once.
  MiniBatch sample(const at::Tensor& seeds, uint64_t epoch, uint64_t batch) const;
  // Temporal sampling (PyG's NeighborLoader(time_attr=...), GraphBolt's
  // TemporalNeighborSampler): seed i, at time seed_times[i], reaches only edges usable at that
  // time, at every hop, since each pick inherits its destination's time. Blocks then relabel
  // (node, time) pairs: a node reached from seeds of different times is one source per time
  // (Block::src_times). The source's graph needs edge times (graph::sorted_by_time); seed
  // pairs must be distinct. An undefined `seed_times` samples as the overload above.
  MiniBatch sample(const at::Tensor& seeds, const at::Tensor& seed_times, uint64_t epoch,
                   uint64_t batch) const;

  const NeighborSamplerOptions& options() const { return options_; }
  int64_t num_layers() const { return static_cast<int64_t>(options_.fanouts.size()); }

 private:
  // Relabel tables sized to the graph, one per concurrent sample() call, reused across batches.
  std::unique_ptr<RelabelWorkspace> acquire_workspace() const;
  void release_workspace(std::unique_ptr<RelabelWorkspace> workspace) const;

  const NeighborSource* source_;
  NeighborSamplerOptions options_;
  mutable std::mutex pool_mutex_;  // guards the pool only, never held while sampling
  mutable std::vector<std::unique_ptr<RelabelWorkspace>> pool_;
};

// Throws OptionError("fanouts") unless `fanouts` names at least one layer, each -1 (all
// neighbors) or positive.
void check_fanouts(const std::vector<int64_t>& fanouts);

// NeighborSamplerOptions::edge_type_fanouts for a typed graph: every edge type gets
// fanouts[l] in layer l except those named in `overrides`, each "EDGE_TYPE=F1,F2,..." with one
// fanout per layer (EDGE_TYPE a relation or src:relation:dst). Throws graphloom::Error naming
// an unknown edge type or a wrong number of layers.
std::vector<std::vector<int64_t>> per_edge_type_fanouts(const graph::GraphSchema& schema,
                                                        const std::vector<int64_t>& fanouts,
                                                        const std::vector<std::string>& overrides);

}  // namespace graphloom::sampling
