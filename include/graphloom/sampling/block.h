// Block (message-flow graph) and MiniBatch: what the sampler hands to the model.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace graphloom::sampling {

// One layer of message passing. The destination nodes are the first `num_dst` entries of
// `src_ids`, so a layer's output rows line up with the next layer's inputs.
struct Block {
  at::Tensor src_ids;  // int64 [num_src]: global ids, destination nodes first
  int64_t num_dst = 0;
  at::Tensor indptr;    // int64 [num_dst + 1]: CSC over destination nodes
  at::Tensor indices;   // int64 [num_edges]: positions in src_ids
  at::Tensor edge_ids;  // int64 [num_edges]: global edge ids (unless the sampler drops them)
  // int64 [num_edges] on typed graphs: the edge type of each edge (each destination's edges
  // grouped by type, in type order); undefined on homogeneous graphs.
  at::Tensor edge_types;
  // int64 [num_src] in temporal batches: the time each source was sampled at (its seed's). A
  // node reached from seeds of different times is one source per time; undefined otherwise.
  at::Tensor src_times;
  // float32 [num_edges], LABOR-* batches only: importance weights, each destination's (per
  // edge type) scaled to sum to its number of edges, so that a mean aggregation weighted by
  // them is the paper's estimator (DGL's edata["edge_weights"]); undefined otherwise.
  at::Tensor edge_weights;

  int64_t num_src() const { return src_ids.numel(); }
  int64_t num_edges() const { return indices.numel(); }
  at::Tensor dst_ids() const { return src_ids.slice(0, 0, num_dst); }
};

// A batch of link-prediction pairs with their corrupted destinations. Every endpoint is one
// of the batch's seeds, found by position: each node is encoded once however many pairs it is in.
struct PairBatch {
  at::Tensor src, dst;      // int64 [num_pairs]: the positive pairs
  at::Tensor negative_dst;  // int64 [num_pairs * k]: k corrupted destinations per pair, in order
  // int64 [num_pairs * k]: the negatives' sources: each pair's src k times, or drawn when the
  // negative sampler corrupts sources too.
  at::Tensor negative_src;
  // int64 [2 * num_pairs + num_pairs * k (+ num_pairs * k)]: the row in `seeds` of each src,
  // dst, negative_dst, and of each negative_src when those were drawn.
  at::Tensor position;
  // int64 [num_pairs]: each pair's row in the caller's list of pairs, when the items carry it
  // (a third column), so that per-pair data (labels, times) can follow the shuffle.
  at::Tensor input_id;
  // int64 [num_pairs]: temporal pairs only, each pair's time: its endpoints and negatives are
  // seeds at that time (the batch's seeds are then distinct (node, time) pairs).
  at::Tensor time;

  int64_t num_pairs() const { return src.numel(); }
  bool defined() const { return src.defined(); }
};

// The edges of a batch as PyG's NeighborLoader lays them out (sampling::pyg_edges): one
// edge_index over the input nodes, ordered by hop, in which each node's in-edges come from the
// hop that reached it first (PyG samples a node's neighbors once; blocks resample it per layer).
struct PygEdges {
  at::Tensor edge_index;  // int64 [2, E]: (source, target) positions in the input nodes
  at::Tensor edge_ids;    // int64 [E]: global edge ids (undefined when the blocks have none)
  std::vector<int64_t> num_sampled_nodes;  // nodes first reached per hop, seeds first
  std::vector<int64_t> num_sampled_edges;  // edges per hop

  bool defined() const { return edge_index.defined(); }
};

// A sampled mini-batch: blocks[0] is applied first (its sources are the input nodes) and
// blocks.back() produces the seeds. Without blocks (models that do not sample) the seeds are
// the input nodes.
struct MiniBatch {
  int64_t index = 0;      // position in the epoch
  at::Tensor seeds;       // int64 [batch]
  at::Tensor seed_times;  // int64 [batch]: temporal batches only, each seed's time
  PairBatch pairs;        // link prediction: the pairs whose endpoints the seeds are
  std::vector<Block> blocks;
  std::map<std::string, at::Tensor> features;  // name -> rows of input_nodes()
  // Rows of the seeds (when fetched); of every input node with DataLoaderOptions::pyg_layout.
  at::Tensor labels;
  PygEdges pyg;               // PyG's view of the blocks, when the loader was asked for it
  double sample_seconds = 0;  // time the loader spent sampling this batch
  double fetch_seconds = 0;   // time the loader spent gathering its rows

  const at::Tensor& input_nodes() const { return blocks.empty() ? seeds : blocks.front().src_ids; }
  int64_t num_sampled_edges() const;
};

// The batch with `fn` applied to each of its defined tensors (blocks, pairs, features, labels,
// PyG edges; not the temporal times, which stay on the host): one list of what a batch holds.
MiniBatch map_tensors(const MiniBatch& batch,
                      const std::function<at::Tensor(const at::Tensor&)>& fn);

// The batch with every tensor on `device` (the same tensors when they already are there). With
// `non_blocking`, copies from pinned host memory overlap the caller's work on the device's
// current stream, as torch's Tensor.to(non_blocking=True).
Block to_device(const Block& block, c10::Device device, bool non_blocking = false);
MiniBatch to_device(const MiniBatch& batch, c10::Device device, bool non_blocking = false);

}  // namespace graphloom::sampling
