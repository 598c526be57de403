// Multi-layer sampling: block invariants, reproducibility across thread counts, argument errors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <omp.h>

#include "graphloom/base/error.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

using testing::random_graph;

void expect_same(const MiniBatch& a, const MiniBatch& b) {
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (std::size_t l = 0; l < a.blocks.size(); ++l) {
    EXPECT_TRUE(at::equal(a.blocks[l].src_ids, b.blocks[l].src_ids)) << "layer " << l;
    EXPECT_TRUE(at::equal(a.blocks[l].indptr, b.blocks[l].indptr)) << "layer " << l;
    EXPECT_TRUE(at::equal(a.blocks[l].indices, b.blocks[l].indices)) << "layer " << l;
    EXPECT_TRUE(at::equal(a.blocks[l].edge_ids, b.blocks[l].edge_ids)) << "layer " << l;
  }
}

TEST(NeighborSampler, BlocksSatisfyTheirInvariants) {
  const graph::CscGraph graph = random_graph(2000, 30000);
  const LocalNeighborSource source(graph);
  const NeighborSampler sampler(&source, {.fanouts = {5, 4, 3}, .seed = 7});
  const at::Tensor seeds = at::tensor({3, 99, 1500, 42, 7}, at::kLong);
  const MiniBatch batch = sampler.sample(seeds, /*epoch=*/0, /*batch=*/0);
  ASSERT_EQ(batch.blocks.size(), 3u);
  const at::Tensor graph_src = graph.indices.to(at::kLong);
  const at::Tensor graph_dst = graph.destinations();
  const at::Tensor in_degree = graph.in_degrees();
  const int64_t fanouts[] = {5, 4, 3};
  at::Tensor expected_dst = seeds;
  for (int64_t l = 2; l >= 0; --l) {
    const Block& block = batch.blocks[l];
    // Destination nodes are the prefix of the sources, and sources are unique.
    ASSERT_EQ(block.num_dst, expected_dst.numel());
    EXPECT_TRUE(at::equal(block.dst_ids(), expected_dst));
    EXPECT_EQ(std::get<0>(at::_unique(block.src_ids)).numel(), block.num_src());
    // Indices are in range; every edge id names a graph edge with this source and destination.
    ASSERT_GT(block.num_edges(), 0);
    EXPECT_GE(block.indices.min().item<int64_t>(), 0);
    EXPECT_LT(block.indices.max().item<int64_t>(), block.num_src());
    const at::Tensor block_dst =
        block.dst_ids().repeat_interleave(block.indptr.slice(0, 1) - block.indptr.slice(0, 0, -1));
    EXPECT_TRUE(at::equal(block.src_ids.index_select(0, block.indices),
                          graph_src.index_select(0, block.edge_ids)));
    EXPECT_TRUE(at::equal(block_dst, graph_dst.index_select(0, block.edge_ids)));
    // Each destination gets min(degree, fanout) neighbors.
    const at::Tensor counts = block.indptr.slice(0, 1) - block.indptr.slice(0, 0, -1);
    EXPECT_TRUE(
        at::equal(counts, at::clamp_max(in_degree.index_select(0, block.dst_ids()), fanouts[l])));
    expected_dst = block.src_ids;
  }
  EXPECT_TRUE(at::equal(batch.input_nodes(), batch.blocks[0].src_ids));
}

TEST(NeighborSampler, WithoutEdgeIdsTheBlocksAreOtherwiseTheSame) {
  const graph::CscGraph graph = random_graph(2000, 30000);
  const LocalNeighborSource source(graph);
  const NeighborSampler with_ids(&source, {.fanouts = {5, 4}, .seed = 7});
  const NeighborSampler without(&source, {.fanouts = {5, 4}, .seed = 7, .edge_ids = false});
  const at::Tensor seeds = at::tensor({3, 99, 1500}, at::kLong);
  const MiniBatch a = with_ids.sample(seeds, 0, 0);
  const MiniBatch b = without.sample(seeds, 0, 0);
  for (std::size_t l = 0; l < 2; ++l) {
    EXPECT_TRUE(a.blocks[l].edge_ids.defined());
    EXPECT_FALSE(b.blocks[l].edge_ids.defined());
    EXPECT_TRUE(at::equal(a.blocks[l].src_ids, b.blocks[l].src_ids));
    EXPECT_TRUE(at::equal(a.blocks[l].indices, b.blocks[l].indices));
  }
}

TEST(NeighborSampler, SameBatchesWithOneAndTwoThreads) {
  const graph::CscGraph graph = random_graph(5000, 80000);
  const LocalNeighborSource source(graph);
  const NeighborSampler sampler(&source, {.fanouts = {10, 10}, .seed = 3});
  const at::Tensor seeds = at::randperm(5000, at::kLong).slice(0, 0, 700);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const MiniBatch one = sampler.sample(seeds, 2, 5);
  omp_set_num_threads(2);
  const MiniBatch two = sampler.sample(seeds, 2, 5);
  omp_set_num_threads(saved);
  expect_same(one, two);
  // Another epoch or batch number draws differently.
  const MiniBatch other = sampler.sample(seeds, 3, 5);
  EXPECT_FALSE(at::equal(one.blocks[0].src_ids, other.blocks[0].src_ids));
}

TEST(NeighborSampler, BadArgumentsAreClearErrors) {
  const LocalNeighborSource source(random_graph(100, 500));
  EXPECT_THROW(NeighborSampler(&source, {.fanouts = {}}), Error);
  EXPECT_THROW(NeighborSampler(&source, {.fanouts = {5, 0}}), Error);
  const NeighborSampler sampler(&source, {.fanouts = {5}});
  EXPECT_THROW(sampler.sample(at::tensor({100}, at::kLong), 0, 0), Error);
  EXPECT_THROW(sampler.sample(at::tensor({1, 1}, at::kLong), 0, 0), Error);  // duplicate seeds
  // The sampler stays usable after a failed batch.
  EXPECT_NO_THROW(sampler.sample(at::tensor({1, 2}, at::kLong), 0, 0));
}

}  // namespace
}  // namespace graphloom::sampling
