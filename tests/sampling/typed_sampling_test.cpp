// Per-edge-type sampling on a typed graph: each destination gets min(degree of type r,
// fanout of r) picks of every type r, picks carry their type, and fanout specs are checked.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"

namespace graphloom::sampling {
namespace {

// 200 nodes, random edges of three types (type = edge index % 3), built with types.
graph::CscGraph random_typed_graph() {
  at::manual_seed(7);
  const int64_t edges = 6000;
  graph::CooInput input;
  input.src = at::randint(200, {edges}, at::kLong);
  input.dst = at::randint(200, {edges}, at::kLong);
  input.edge_types = (at::arange(edges, at::kLong) % 3).to(at::kShort);
  input.num_nodes = 200;
  return graph::csc_from_coo(input);
}

// (destination, type) -> in-degree of that type.
std::map<std::pair<int64_t, int64_t>, int64_t> typed_degrees(const graph::CscGraph& graph) {
  std::map<std::pair<int64_t, int64_t>, int64_t> degree;
  const at::Tensor types = graph.type_per_edge.to(at::kLong);
  for (int64_t v = 0; v < graph.num_nodes; ++v) {
    for (int64_t e = graph.indptr[v].item<int64_t>(); e < graph.indptr[v + 1].item<int64_t>(); ++e)
      ++degree[{v, types[e].item<int64_t>()}];
  }
  return degree;
}

TEST(TypedSampling, EveryEdgeTypeGetsItsOwnFanout) {
  const graph::CscGraph graph = random_typed_graph();
  const auto degree = typed_degrees(graph);
  const LocalNeighborSource source(graph);
  const std::vector<int64_t> fanouts{2, 0, -1};
  SampleOptions options;
  options.edge_type_fanouts = fanouts;
  const at::Tensor seeds = at::arange(200, at::kLong);
  const SampledEdges picks = source.sample_neighbors(seeds, /*fanout=*/5, options);
  ASSERT_TRUE(picks.edge_types.defined());
  ASSERT_EQ(picks.edge_types.numel(), picks.neighbors.numel());
  // The type each pick reports is the type of the edge it picked (edge ids are CSC positions
  // of the unsorted build, kept through the type sort).
  const at::Tensor graph_type_by_id = at::empty({graph.num_edges()}, at::kLong);
  graph_type_by_id.index_copy_(0, graph.edge_ids_or_positions(), graph.type_per_edge.to(at::kLong));
  EXPECT_TRUE(graph_type_by_id.index_select(0, picks.edge_ids).equal(picks.edge_types));
  for (int64_t v = 0; v < 200; ++v) {
    std::map<int64_t, int64_t> count;
    std::set<int64_t> ids;
    for (int64_t j = picks.indptr[v].item<int64_t>(); j < picks.indptr[v + 1].item<int64_t>();
         ++j) {
      ++count[picks.edge_types[j].item<int64_t>()];
      EXPECT_TRUE(ids.insert(picks.edge_ids[j].item<int64_t>()).second) << "edge picked twice";
    }
    for (int64_t r = 0; r < 3; ++r) {
      const auto it = degree.find({v, r});
      const int64_t available = it == degree.end() ? 0 : it->second;
      const int64_t expected = fanouts[r] < 0 ? available : std::min(available, fanouts[r]);
      EXPECT_EQ(count[r], expected) << "node " << v << " type " << r;
    }
  }
  // Without per-type fanouts the scalar fanout applies to each type (DGL's int fanout).
  const SampledEdges each = source.sample_neighbors(seeds, /*fanout=*/1, {});
  for (int64_t v = 0; v < 200; ++v) {
    int64_t types_present = 0;
    for (int64_t r = 0; r < 3; ++r) types_present += degree.count({v, r});
    EXPECT_EQ(each.indptr[v + 1].item<int64_t>() - each.indptr[v].item<int64_t>(), types_present);
  }
}

// Out-edges of a typed graph: per-type fanouts count each node's out-edges of that type, and
// every pick reports the type and id its edge has in the in-edge CSC.
TEST(TypedSampling, OutDirectionKeepsPerTypeFanoutsAndEdgeTypes) {
  const graph::CscGraph graph = random_typed_graph();
  std::map<std::pair<int64_t, int64_t>, int64_t> out_degree;  // (source, type) -> count
  const at::Tensor types = graph.type_per_edge.to(at::kLong);
  const at::Tensor sources = graph.indices.to(at::kLong);
  for (int64_t e = 0; e < graph.num_edges(); ++e)
    ++out_degree[{sources[e].item<int64_t>(), types[e].item<int64_t>()}];
  const LocalNeighborSource source(graph);
  SampleOptions options;
  options.direction = EdgeDirection::kOut;
  options.edge_type_fanouts = {1, 3, 0};
  const SampledEdges picks = source.sample_neighbors(at::arange(200, at::kLong), 2, options);
  ASSERT_TRUE(picks.edge_types.defined());
  const at::Tensor type_by_id = at::empty({graph.num_edges()}, at::kLong);
  type_by_id.index_copy_(0, graph.edge_ids_or_positions(), types);
  EXPECT_TRUE(type_by_id.index_select(0, picks.edge_ids).equal(picks.edge_types));
  for (int64_t v = 0; v < 200; ++v) {
    std::map<int64_t, int64_t> count;
    for (int64_t j = picks.indptr[v].item<int64_t>(); j < picks.indptr[v + 1].item<int64_t>(); ++j)
      ++count[picks.edge_types[j].item<int64_t>()];
    for (int64_t r = 0; r < 3; ++r) {
      const auto it = out_degree.find({v, r});
      const int64_t available = it == out_degree.end() ? 0 : it->second;
      EXPECT_EQ(count[r], std::min(available, options.edge_type_fanouts[r]))
          << "node " << v << " type " << r;
    }
  }
}

TEST(TypedSampling, BlocksCarryEdgeTypesAndBatchesAreReproducible) {
  const LocalNeighborSource source(random_typed_graph());
  const NeighborSampler sampler(&source,
                                {.fanouts = {3, 3}, .edge_type_fanouts = {{1, 1, 1}, {0, 4, 2}}});
  const at::Tensor seeds = at::arange(10, 30, at::kLong);
  const MiniBatch a = sampler.sample(seeds, 1, 2);
  const MiniBatch b = sampler.sample(seeds, 1, 2);
  for (std::size_t l = 0; l < 2; ++l) {
    ASSERT_TRUE(a.blocks[l].edge_types.defined());
    EXPECT_EQ(a.blocks[l].edge_types.numel(), a.blocks[l].num_edges());
    EXPECT_TRUE(a.blocks[l].edge_types.equal(b.blocks[l].edge_types));
    EXPECT_TRUE(a.blocks[l].src_ids.equal(b.blocks[l].src_ids));
  }
  // Output layer: fanout 0 for type 0, so no edge of type 0.
  EXPECT_EQ((a.blocks[1].edge_types == 0).sum().item<int64_t>(), 0);
  EXPECT_LE((a.blocks[1].edge_types == 1).sum().item<int64_t>(), 4 * 20);
}

TEST(TypedSampling, FanoutSpecsAreResolvedAndCheckedAgainstTheSchema) {
  graph::GraphSchema schema;
  schema.node_types = {"user", "item"};
  schema.edge_types = {{"user", "rates", "item"}, {"item", "rated_by", "user"}};
  const auto fanouts = per_edge_type_fanouts(schema, {10, 5}, {"rated_by=3,-1"});
  EXPECT_EQ(fanouts, (std::vector<std::vector<int64_t>>{{10, 3}, {5, -1}}));
  EXPECT_THROW(per_edge_type_fanouts(schema, {10, 5}, {"likes=1,1"}), Error);
  EXPECT_THROW(per_edge_type_fanouts(schema, {10, 5}, {"rates=1"}), Error);
  EXPECT_THROW(per_edge_type_fanouts(schema, {10, 5}, {"rates=1,a"}), Error);
  EXPECT_THROW(per_edge_type_fanouts(schema, {10, 5}, {"rates"}), Error);
  EXPECT_THROW(per_edge_type_fanouts({}, {10, 5}, {"rates=1,1"}), Error);
  // Per-type fanouts on an untyped graph are refused by the kernel.
  at::manual_seed(1);
  graph::CooInput input;
  input.src = at::randint(10, {30}, at::kLong);
  input.dst = at::randint(10, {30}, at::kLong);
  input.num_nodes = 10;
  const LocalNeighborSource plain(graph::csc_from_coo(input));
  SampleOptions options;
  options.edge_type_fanouts = {1};
  EXPECT_THROW(plain.sample_neighbors(at::arange(10, at::kLong), 1, options), Error);
}

}  // namespace
}  // namespace graphloom::sampling
