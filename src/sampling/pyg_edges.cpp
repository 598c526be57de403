// PyG's edge layout of a batch: the tail of each block's CSC, targets expanded from its indptr.
#include "graphloom/sampling/pyg_edges.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace graphloom::sampling {

PygEdges pyg_edges(const MiniBatch& batch) {
  PygEdges out;
  const std::vector<Block>& blocks = batch.blocks;
  out.num_sampled_nodes.push_back(blocks.empty() ? batch.seeds.numel() : blocks.back().num_dst);
  for (auto block = blocks.rbegin(); block != blocks.rend(); ++block) {
    out.num_sampled_nodes.push_back(block->num_src() - block->num_dst);
  }
  // Hop k's block keeps the destinations from `first_new` on: those first reached at hop k - 1.
  std::vector<int64_t> first_new(blocks.size()), first_edge(blocks.size());
  int64_t total = 0, reached = 0;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const Block& block = blocks[blocks.size() - 1 - k];
    first_new[k] = reached;
    first_edge[k] = block.indptr[reached].item<int64_t>();
    out.num_sampled_edges.push_back(block.num_edges() - first_edge[k]);
    total += out.num_sampled_edges.back();
    reached += out.num_sampled_nodes[k];
  }
  out.edge_index = at::empty({2, total}, at::kLong);
  const bool with_ids =
      !blocks.empty() && std::all_of(blocks.begin(), blocks.end(),
                                     [](const Block& b) { return b.edge_ids.defined(); });
  if (with_ids) out.edge_ids = at::empty({total}, at::kLong);
  int64_t* targets = out.edge_index.data_ptr<int64_t>() + total;
  int64_t offset = 0;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const Block& block = blocks[blocks.size() - 1 - k];
    const int64_t count = out.num_sampled_edges[k];
    // ATen's copies run on the worker's threads.
    out.edge_index[0].narrow(0, offset, count).copy_(block.indices.narrow(0, first_edge[k], count));
    if (with_ids) {
      out.edge_ids.narrow(0, offset, count).copy_(block.edge_ids.narrow(0, first_edge[k], count));
    }
    const at::Tensor indptr = block.indptr.contiguous();
    const int64_t* pointer = indptr.data_ptr<int64_t>();
    int64_t* block_targets = targets + offset - first_edge[k];
#pragma omp parallel for schedule(static)
    for (int64_t d = first_new[k]; d < block.num_dst; ++d) {
      std::fill(block_targets + pointer[d], block_targets + pointer[d + 1], d);
    }
    offset += count;
  }
  return out;
}

}  // namespace graphloom::sampling
