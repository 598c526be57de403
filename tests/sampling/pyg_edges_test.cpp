// pyg_edges against the definition, computed edge by edge with masks: per hop, the in-edges of
// the nodes that hop reached first; positions, ids and counts in PyG's order.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/sampling/pyg_edges.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

// The reference: every block's edges, masked to the destinations new at that hop.
PygEdges reference(const MiniBatch& batch) {
  PygEdges out;
  out.num_sampled_nodes.push_back(batch.blocks.back().num_dst);
  for (auto block = batch.blocks.rbegin(); block != batch.blocks.rend(); ++block) {
    out.num_sampled_nodes.push_back(block->num_src() - block->num_dst);
  }
  std::vector<at::Tensor> sources, targets, ids;
  int64_t first_new = 0;
  for (std::size_t k = 0; k < batch.blocks.size(); ++k) {
    const Block& block = batch.blocks[batch.blocks.size() - 1 - k];
    const at::Tensor destination =
        at::repeat_interleave(at::arange(block.num_dst, at::kLong), block.indptr.diff());
    const at::Tensor keep = destination >= first_new;
    sources.push_back(block.indices.masked_select(keep));
    targets.push_back(destination.masked_select(keep));
    ids.push_back(block.edge_ids.masked_select(keep));
    out.num_sampled_edges.push_back(keep.sum().item<int64_t>());
    first_new += out.num_sampled_nodes[k];
  }
  out.edge_index = at::stack({at::cat(sources), at::cat(targets)});
  out.edge_ids = at::cat(ids);
  return out;
}

TEST(PygEdges, EqualTheMaskedDefinitionOnEveryDepth) {
  const graph::CscGraph graph = testing::random_graph(3000, 40000);
  const LocalNeighborSource source(graph);
  for (const std::vector<int64_t>& fanouts :
       std::vector<std::vector<int64_t>>{{5}, {4, 3}, {10, 5, 3}, {-1, 2}}) {
    const NeighborSampler sampler(&source, {.fanouts = fanouts, .seed = 3});
    const MiniBatch batch = sampler.sample(at::arange(0, 3000, 29, at::kLong), 0, 0);
    const PygEdges got = pyg_edges(batch);
    const PygEdges want = reference(batch);
    EXPECT_TRUE(at::equal(got.edge_index, want.edge_index));
    EXPECT_TRUE(at::equal(got.edge_ids, want.edge_ids));
    EXPECT_EQ(got.num_sampled_nodes, want.num_sampled_nodes);
    EXPECT_EQ(got.num_sampled_edges, want.num_sampled_edges);
    EXPECT_GT(got.edge_index.size(1), 0);
  }
}

// Each node sampled once (PyG's hops): the edges of the default blocks' PyG layout, less those
// of the nodes that only the dropped resamples of destinations reached (and of their own
// neighbors, from the third hop on), and no node that no edge touches.
TEST(PygEdges, EachNodeOnceKeepsTheEdgesAndDropsTheUntouchedNodes) {
  const graph::CscGraph graph = testing::random_graph(3000, 60000);
  const LocalNeighborSource source(graph);
  const at::Tensor seeds = at::arange(0, 3000, 37, at::kLong);
  const auto global_edges = [](const MiniBatch& batch, const PygEdges& edges) {
    const at::Tensor n_id = batch.input_nodes();
    const at::Tensor keys = n_id.index_select(0, edges.edge_index[0]) * 3000 +
                            n_id.index_select(0, edges.edge_index[1]);
    return std::get<0>(at::sort(keys));
  };
  const auto untouched = [](const MiniBatch& batch, const PygEdges& edges) {
    at::Tensor touched = at::zeros({batch.input_nodes().numel()}, at::kBool);
    touched.index_fill_(0, edges.edge_index.flatten(), true);
    touched.narrow(0, 0, batch.seeds.numel()).fill_(true);
    return (~touched).sum().item<int64_t>();
  };
  for (const std::vector<int64_t>& fanouts :
       std::vector<std::vector<int64_t>>{{4, 3}, {10, 5, 3}, {-1, 2}}) {
    const NeighborSampler blocks(&source, {.fanouts = fanouts, .seed = 5});
    const NeighborSampler once(&source, {.fanouts = fanouts, .seed = 5, .each_node_once = true});
    const MiniBatch full = blocks.sample(seeds, 1, 2);
    const MiniBatch lean = once.sample(seeds, 1, 2);
    const PygEdges full_edges = pyg_edges(full);
    const PygEdges lean_edges = pyg_edges(lean);
    EXPECT_TRUE(at::isin(global_edges(lean, lean_edges), global_edges(full, full_edges))
                    .all()
                    .item<bool>());
    for (std::size_t hop = 0; hop < std::min<std::size_t>(2, fanouts.size()); ++hop) {
      EXPECT_EQ(full_edges.num_sampled_edges[hop], lean_edges.num_sampled_edges[hop]);
    }
    EXPECT_GT(untouched(full, full_edges), 0);
    EXPECT_EQ(untouched(lean, lean_edges), 0);
    // The head of every block but the seeds' one has no in-edges.
    for (std::size_t l = 0; l + 1 < lean.blocks.size(); ++l) {
      const int64_t head = lean.blocks[l + 1].num_dst;
      EXPECT_EQ(lean.blocks[l].indptr[head].item<int64_t>(), 0);
    }
  }
}

TEST(PygEdges, WithoutEdgeIdsTheIdsAreUndefined) {
  const graph::CscGraph graph = testing::random_graph(200, 1000);
  const LocalNeighborSource source(graph);
  const NeighborSampler sampler(&source, {.fanouts = {3, 3}, .edge_ids = false});
  const PygEdges got = pyg_edges(sampler.sample(at::arange(10, at::kLong), 0, 0));
  EXPECT_TRUE(got.defined());
  EXPECT_FALSE(got.edge_ids.defined());
}

}  // namespace
}  // namespace graphloom::sampling
