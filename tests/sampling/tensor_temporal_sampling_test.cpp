// Temporal sampling by the tensor-op sampler on the CPU against the C++ kernel: the same usable
// prefixes, picks and blocks ((node, time) sources), bit for bit, typed graphs included.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/temporal.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/sampling/relabel.h"
#include "graphloom/sampling/tensor_neighbor_source.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

const c10::Device kCpu(c10::DeviceType::CPU);

// The random graph with hubs' worth of edges, random edge times, sorted; typed: three edge
// types (int16), each segment sorted by time.
graph::CscGraph timed_graph(bool typed) {
  const graph::CscGraph plain = testing::random_graph(400, 12000, 5);
  graph::CooInput input;
  input.src = plain.indices.to(at::kLong);
  input.dst = plain.destinations();
  input.num_nodes = plain.num_nodes;
  if (typed) input.edge_types = at::randint(3, {plain.num_edges()}, at::kLong).to(at::kShort);
  const graph::CscGraph graph = graph::csc_from_coo(input);
  return graph::sorted_by_time(graph, at::Tensor(),
                               at::randint(100, {graph.num_edges()}, at::kLong));
}

void expect_equal(const at::Tensor& want, const at::Tensor& got, const std::string& what) {
  ASSERT_EQ(want.defined(), got.defined()) << what;
  if (want.defined()) {
    EXPECT_TRUE(at::equal(want, got.to(want.device()))) << what;
  }
}

TEST(TensorTemporalSampling, PicksWhatTheCppKernelPicks) {
  at::manual_seed(2);
  for (const bool typed : {false, true}) {
    const graph::CscGraph graph = timed_graph(typed);
    const LocalNeighborSource cpp(graph);
    const TensorNeighborSource tensor(graph, kCpu);
    const at::Tensor seeds = at::randint(400, {300}, at::kLong);
    const at::Tensor seed_times = at::randint(-5, 110, {300}, at::kLong);
    for (const TemporalStrategy strategy : {TemporalStrategy::kUniform, TemporalStrategy::kLast}) {
      for (const bool replace : {false, true}) {
        if (replace && strategy == TemporalStrategy::kLast) continue;  // refused alike
        for (const int64_t fanout : {-1, 0, 2, 9, 70}) {
          SampleOptions options{.replace = replace,
                                .random_key = 40 + static_cast<uint64_t>(fanout),
                                .seed_times = seed_times,
                                .temporal_strategy = strategy};
          if (typed) options.edge_type_fanouts = {fanout, 3, -1};
          const std::string what = fmt::format("typed {} strategy {} replace {} fanout {}", typed,
                                               static_cast<int>(strategy), replace, fanout);
          const SampledEdges want = cpp.sample_neighbors(seeds, fanout, options);
          const SampledEdges got = tensor.sample_neighbors(seeds, fanout, options);
          expect_equal(want.indptr, got.indptr, what);
          expect_equal(want.neighbors, got.neighbors, what);
          expect_equal(want.edge_ids, got.edge_ids, what);
          expect_equal(want.edge_types, got.edge_types, what);
        }
      }
    }
  }
}

// Multi-hop: each pick lives at its destination's time, so blocks relabel (node, time) pairs;
// the tensor ops' sort gives the hash table's sources, times and indices.
TEST(TensorTemporalSampling, NeighborSamplerBuildsTheSameTimedBlocks) {
  at::manual_seed(3);
  const graph::CscGraph graph = timed_graph(false);
  const LocalNeighborSource cpp(graph);
  const TensorNeighborSource tensor(graph, kCpu);
  const NeighborSamplerOptions options{.fanouts = {4, 6}, .seed = 9};
  const NeighborSampler cpp_sampler(&cpp, options);
  const NeighborSampler tensor_sampler(&tensor, options);
  const at::Tensor seeds = at::tensor({1, 2, 3, 1, 50}, at::kLong);
  const at::Tensor times = at::tensor({10, 99, 50, 70, 30}, at::kLong);  // node 1 twice
  for (uint64_t batch = 0; batch < 3; ++batch) {
    const MiniBatch want = cpp_sampler.sample(seeds, times, 0, batch);
    const MiniBatch got = tensor_sampler.sample(seeds, times, 0, batch);
    ASSERT_EQ(want.blocks.size(), got.blocks.size());
    for (std::size_t l = 0; l < want.blocks.size(); ++l) {
      const std::string what = fmt::format("batch {} layer {}", batch, l);
      expect_equal(want.blocks[l].src_ids, got.blocks[l].src_ids, what);
      expect_equal(want.blocks[l].src_times, got.blocks[l].src_times, what);
      expect_equal(want.blocks[l].indptr, got.blocks[l].indptr, what);
      expect_equal(want.blocks[l].indices, got.blocks[l].indices, what);
    }
  }
}

TEST(TensorTemporalSampling, TimedRelabelingBySortingIsTheHashTables) {
  at::manual_seed(4);
  const at::Tensor dst = at::tensor({5, 5, 7}, at::kLong);
  const at::Tensor dst_times = at::tensor({1, 2, 1}, at::kLong);
  const at::Tensor picks = at::randint(10, {200}, at::kLong);
  const at::Tensor pick_times = at::randint(3, {200}, at::kLong);
  const Relabeled want = relabel_timed(dst, dst_times, picks, pick_times);
  const Relabeled got = relabel_with_tensor_ops(dst, picks, dst_times, pick_times);
  expect_equal(want.src_ids, got.src_ids, "src_ids");
  expect_equal(want.src_times, got.src_times, "src_times");
  expect_equal(want.indices, got.indices, "indices");
  EXPECT_THROW(relabel_with_tensor_ops(at::tensor({5, 5}, at::kLong), picks,
                                       at::tensor({1, 1}, at::kLong), pick_times),
               Error);
}

}  // namespace
}  // namespace graphloom::sampling
