// Temporal neighbor sampling: columns sorted by the time edges become usable, no edge later
// than its seed's time at any hop, uniform picks among the usable edges, the `last` strategy,
// (node, time) sources, and the requests it refuses.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/temporal.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "sampling_fixtures.h"

namespace graphloom::sampling {
namespace {

// Node 0's in-edge i (from node i + 1) becomes usable at time i.
graph::CscGraph timed_star(int64_t degree) {
  const graph::CscGraph star = testing::star_graph(degree);
  return graph::sorted_by_time(star, at::Tensor(), at::arange(degree, at::kLong));
}

SampleOptions at_time(int64_t time, int64_t seeds = 1) {
  return {.seed_times = at::full({seeds}, time, at::kLong)};
}

TEST(SortedByTime, SortsEachColumnAndKeepsEdgeIdsAndTheLaterOfNodeAndEdgeTime) {
  const graph::CscGraph graph = testing::random_graph(300, 3000);
  at::manual_seed(4);
  const at::Tensor edge_time = at::randint(100, {graph.num_edges()}, at::kLong);
  const at::Tensor node_time = at::randint(100, {graph.num_nodes}, at::kLong);
  const graph::CscGraph sorted = graph::sorted_by_time(graph, node_time, edge_time);
  sorted.validate();
  // Edge ids are CSC positions of the unsorted graph: each sorted edge keeps its source and
  // takes the later of its own time and its source's.
  const at::Tensor ids = sorted.edge_ids;
  EXPECT_TRUE(at::equal(sorted.indices, graph.indices.index_select(0, ids)));
  EXPECT_TRUE(at::equal(sorted.edge_time,
                        at::maximum(edge_time.index_select(0, ids),
                                    node_time.index_select(0, sorted.indices.to(at::kLong)))));
  EXPECT_TRUE(at::equal(sorted.destinations(), graph.destinations().index_select(0, ids)));
  const auto* indptr = sorted.indptr.data_ptr<int64_t>();
  const auto* time = sorted.edge_time.data_ptr<int64_t>();
  for (int64_t v = 0; v < sorted.num_nodes; ++v) {
    for (int64_t e = indptr[v] + 1; e < indptr[v + 1]; ++e) ASSERT_LE(time[e - 1], time[e]);
  }
  EXPECT_THROW(graph::sorted_by_time(graph, at::Tensor(), at::Tensor()), Error);
  EXPECT_THROW(graph::sorted_by_time(graph, at::Tensor(), at::zeros({5}, at::kLong)), Error);
}

TEST(TemporalSampling, NoEdgeOfAnyHopIsLaterThanItsSeed) {
  const graph::CscGraph plain = testing::random_graph(2000, 30000);
  at::manual_seed(7);
  const at::Tensor edge_time = at::randint(1000, {plain.num_edges()}, at::kLong);
  const at::Tensor node_time = at::randint(1000, {plain.num_nodes}, at::kLong);
  const LocalNeighborSource source(graph::sorted_by_time(plain, node_time, edge_time));
  // An edge's own time and its source's, by the id the blocks report (a CSC position of plain).
  const auto* edge_time_of = edge_time.data_ptr<int64_t>();
  const auto* node_time_of = node_time.data_ptr<int64_t>();
  for (const TemporalStrategy strategy : {TemporalStrategy::kUniform, TemporalStrategy::kLast}) {
    const NeighborSampler sampler(&source,
                                  {.fanouts = {4, 4, 4}, .seed = 3, .temporal_strategy = strategy});
    int64_t edges_checked = 0;
    for (uint64_t batch = 0; batch < 20; ++batch) {
      const at::Tensor seeds = at::randperm(2000, at::kLong).slice(0, 0, 64);
      const at::Tensor seed_times = at::randint(200, 1000, {64}, at::kLong);
      const MiniBatch mb = sampler.sample(seeds, seed_times, 0, batch);
      const std::set<int64_t> seed_time_set(seed_times.data_ptr<int64_t>(),
                                            seed_times.data_ptr<int64_t>() + 64);
      for (const Block& block : mb.blocks) {
        ASSERT_TRUE(block.src_times.defined());
        const auto* src = block.src_ids.data_ptr<int64_t>();
        const auto* time = block.src_times.data_ptr<int64_t>();
        const auto* indptr = block.indptr.data_ptr<int64_t>();
        const auto* index = block.indices.data_ptr<int64_t>();
        const auto* ids = block.edge_ids.data_ptr<int64_t>();
        for (int64_t i = 0; i < block.num_src(); ++i) ASSERT_TRUE(seed_time_set.count(time[i]));
        for (int64_t d = 0; d < block.num_dst; ++d) {
          for (int64_t e = indptr[d]; e < indptr[d + 1]; ++e) {
            ASSERT_LE(edge_time_of[ids[e]], time[d]) << "edge " << ids[e] << " batch " << batch;
            ASSERT_LE(node_time_of[src[index[e]]], time[d]);
            ASSERT_EQ(time[index[e]], time[d]);  // a pick lives at its destination's time
            ++edges_checked;
          }
        }
      }
    }
    EXPECT_GT(edges_checked, 10000);
  }
}

TEST(TemporalSampling, PicksUniformlyAmongTheUsableEdgesOnly) {
  const LocalNeighborSource source(timed_star(20));
  std::vector<int64_t> counts(20, 0);
  const int64_t draws = 4000;
  for (int64_t k = 0; k < draws; ++k) {
    SampleOptions options = at_time(9);
    options.random_key = static_cast<uint64_t>(k);
    const SampledEdges picks = source.sample_neighbors(at::zeros({1}, at::kLong), 3, options);
    ASSERT_EQ(picks.neighbors.numel(), 3);
    ASSERT_EQ(std::get<0>(at::_unique(picks.neighbors)).numel(), 3);
    for (int64_t j = 0; j < 3; ++j)
      ++counts[static_cast<std::size_t>(picks.edge_ids[j].item<int64_t>())];
  }
  for (int64_t e = 10; e < 20; ++e) EXPECT_EQ(counts[static_cast<std::size_t>(e)], 0) << e;
  const std::vector<int64_t> usable(counts.begin(), counts.begin() + 10);
  // 9 degrees of freedom: 27.9 is the 0.999 quantile.
  EXPECT_LT(testing::chi_square(usable, std::vector<double>(10, 0.1)), 27.9);

  // With replacement: exactly `fanout` picks, all usable; a seed before every edge gets none.
  SampleOptions replace = at_time(4);
  replace.replace = true;
  const SampledEdges repeated = source.sample_neighbors(at::zeros({1}, at::kLong), 50, replace);
  ASSERT_EQ(repeated.neighbors.numel(), 50);
  EXPECT_LE(repeated.edge_ids.max().item<int64_t>(), 4);
  EXPECT_EQ(source.sample_neighbors(at::zeros({1}, at::kLong), 5, at_time(-1)).neighbors.numel(),
            0);
  EXPECT_EQ(source.sample_neighbors(at::zeros({1}, at::kLong), -1, at_time(6)).neighbors.numel(),
            7);
}

TEST(TemporalSampling, LastTakesTheMostRecentUsableEdges) {
  const LocalNeighborSource source(timed_star(20));
  SampleOptions options = at_time(9);
  options.temporal_strategy = TemporalStrategy::kLast;
  const SampledEdges picks = source.sample_neighbors(at::zeros({1}, at::kLong), 3, options);
  EXPECT_EQ(std::vector<int64_t>(picks.edge_ids.data_ptr<int64_t>(),
                                 picks.edge_ids.data_ptr<int64_t>() + 3),
            (std::vector<int64_t>{7, 8, 9}));
  EXPECT_TRUE(at::equal(picks.neighbors, picks.edge_ids + 1));
  options.seed_times = at::full({1}, 1, at::kLong);  // fewer usable edges than the fanout
  EXPECT_EQ(source.sample_neighbors(at::zeros({1}, at::kLong), 3, options).neighbors.numel(), 2);
}

TEST(TemporalSampling, ANodeReachedAtTwoTimesIsTwoSources) {
  // Nodes 0 and 1 both have one in-edge from node 2, usable from time 0.
  graph::CooInput input;
  input.src = at::tensor({2, 2}, at::kLong);
  input.dst = at::tensor({0, 1}, at::kLong);
  input.num_nodes = 3;
  const LocalNeighborSource source(
      graph::sorted_by_time(graph::csc_from_coo(input), at::Tensor(), at::zeros({2}, at::kLong)));
  const NeighborSampler sampler(&source, {.fanouts = {1}});
  const at::Tensor seeds = at::tensor({0, 1}, at::kLong);
  const Block apart = sampler.sample(seeds, at::tensor({5, 6}, at::kLong), 0, 0).blocks[0];
  EXPECT_TRUE(at::equal(apart.src_ids, at::tensor({0, 1, 2, 2}, at::kLong)));
  EXPECT_TRUE(at::equal(apart.src_times, at::tensor({5, 6, 5, 6}, at::kLong)));
  EXPECT_TRUE(at::equal(apart.indices, at::tensor({2, 3}, at::kLong)));
  const Block shared = sampler.sample(seeds, at::tensor({5, 5}, at::kLong), 0, 0).blocks[0];
  EXPECT_TRUE(at::equal(shared.src_ids, at::tensor({0, 1, 2}, at::kLong)));
  EXPECT_TRUE(at::equal(shared.indices, at::tensor({2, 2}, at::kLong)));
  // The same node at two times may be two seeds; at one time it is a duplicate.
  EXPECT_NO_THROW(
      sampler.sample(at::tensor({0, 0}, at::kLong), at::tensor({1, 2}, at::kLong), 0, 0));
  EXPECT_THROW(sampler.sample(at::tensor({0, 0}, at::kLong), at::tensor({1, 1}, at::kLong), 0, 0),
               Error);
  // The workspace was left clean by the throw: the next batch relabels as before.
  EXPECT_TRUE(at::equal(
      sampler.sample(seeds, at::tensor({5, 6}, at::kLong), 0, 0).blocks[0].src_ids, apart.src_ids));
}

// A typed graph: the random graph's edges in three types (int8), its CSC sorted by type.
graph::CscGraph typed_graph() {
  const graph::CscGraph plain = testing::random_graph(500, 12000);
  graph::CooInput input;
  input.src = plain.indices.to(at::kLong);
  input.dst = plain.destinations();
  input.edge_types = at::randint(3, {plain.num_edges()}, at::kLong).to(at::kChar);
  input.num_nodes = plain.num_nodes;
  input.keep_edge_ids = true;
  return graph::csc_from_coo(input);
}

// With every edge usable (all times equal, so the sort keeps each column's order), typed
// temporal sampling is the typed kernel: the same streams, segments and picks.
TEST(TypedTemporalSampling, WithEveryEdgeUsableItPicksWhatTheTypedKernelPicks) {
  const graph::CscGraph graph = typed_graph();
  const LocalNeighborSource plain(graph);
  const LocalNeighborSource timed(
      graph::sorted_by_time(graph, at::Tensor(), at::zeros({graph.num_edges()}, at::kLong)));
  const at::Tensor seeds = at::randint(500, {200}, at::kLong);
  for (const bool replace : {false, true}) {
    for (const std::vector<int64_t>& per_type : {std::vector<int64_t>{}, {2, 0, -1}, {5, 40, 1}}) {
      SampleOptions options{.replace = replace, .random_key = 17, .edge_type_fanouts = per_type};
      const SampledEdges want = plain.sample_neighbors(seeds, 4, options);
      options.seed_times = at::zeros({seeds.numel()}, at::kLong);
      const SampledEdges got = timed.sample_neighbors(seeds, 4, options);
      EXPECT_TRUE(at::equal(want.indptr, got.indptr)) << replace;
      EXPECT_TRUE(at::equal(want.neighbors, got.neighbors)) << replace;
      EXPECT_TRUE(at::equal(want.edge_ids, got.edge_ids)) << replace;
      EXPECT_TRUE(at::equal(want.edge_types, got.edge_types)) << replace;
    }
  }
}

// Random times: each type segment gives min(its usable edges, its fanout) picks, all of its
// type and no later than the seed; `last` takes each segment's latest usable edges.
TEST(TypedTemporalSampling, EachTypeTakesItsFanoutAmongItsUsableEdges) {
  const graph::CscGraph graph = typed_graph();
  at::manual_seed(9);
  const at::Tensor edge_time = at::randint(1000, {graph.num_edges()}, at::kLong);
  const graph::CscGraph sorted = graph::sorted_by_time(graph, at::Tensor(), edge_time);
  const auto* indptr = sorted.indptr.data_ptr<int64_t>();
  const auto* sorted_type = sorted.type_per_edge.data_ptr<int8_t>();
  const auto* sorted_time = sorted.edge_time.data_ptr<int64_t>();
  for (int64_t v = 0; v < sorted.num_nodes; ++v) {  // by type, then time
    for (int64_t e = indptr[v] + 1; e < indptr[v + 1]; ++e) {
      ASSERT_TRUE(sorted_type[e - 1] < sorted_type[e] ||
                  (sorted_type[e - 1] == sorted_type[e] && sorted_time[e - 1] <= sorted_time[e]));
    }
  }
  const LocalNeighborSource source(sorted);
  const at::Tensor seeds = at::arange(500, at::kLong);
  const at::Tensor seed_times = at::randint(1000, {500}, at::kLong);
  const std::vector<int64_t> fanouts = {3, 1, 6};
  // Picks carry the graph's edge ids (COO order); its types and times are in CSC order.
  const at::Tensor position_of = at::empty_like(graph.edge_ids);
  position_of.index_put_({graph.edge_ids}, at::arange(graph.num_edges(), at::kLong));
  const at::Tensor type_of = graph.type_per_edge.to(at::kLong);
  for (const TemporalStrategy strategy : {TemporalStrategy::kUniform, TemporalStrategy::kLast}) {
    const SampledEdges picks = source.sample_neighbors(
        seeds, 0,
        {.edge_type_fanouts = fanouts, .seed_times = seed_times, .temporal_strategy = strategy});
    const auto* offset = picks.indptr.data_ptr<int64_t>();
    for (int64_t s = 0; s < 500; ++s) {
      const int64_t now = seed_times[s].item<int64_t>();
      for (int64_t r = 0; r < 3; ++r) {
        std::vector<int64_t> usable;  // times of the seed's usable edges of type r
        for (int64_t e = indptr[s]; e < indptr[s + 1]; ++e) {
          if (sorted_type[e] == r && sorted_time[e] <= now) usable.push_back(sorted_time[e]);
        }
        std::vector<int64_t> picked;
        for (int64_t j = offset[s]; j < offset[s + 1]; ++j) {
          const int64_t id = position_of[picks.edge_ids[j].item<int64_t>()].item<int64_t>();
          if (picks.edge_types[j].item<int64_t>() != r) continue;
          ASSERT_EQ(type_of[id].item<int64_t>(), r);
          ASSERT_LE(edge_time[id].item<int64_t>(), now);
          picked.push_back(edge_time[id].item<int64_t>());
        }
        ASSERT_EQ(static_cast<int64_t>(picked.size()),
                  std::min<int64_t>(static_cast<int64_t>(usable.size()), fanouts[r]));
        if (strategy == TemporalStrategy::kLast && !picked.empty()) {
          EXPECT_EQ(*std::min_element(picked.begin(), picked.end()),
                    usable[usable.size() - picked.size()]);
        }
      }
    }
  }
}

TEST(TemporalSampling, RefusesWhatItCannotServe) {
  const LocalNeighborSource source(timed_star(10));
  const at::Tensor seed = at::zeros({1}, at::kLong);
  const auto field_of = [&](SampleOptions options) {
    try {
      source.sample_neighbors(seed, 3, options);
    } catch (const OptionError& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  SampleOptions last_with_replacement = at_time(5);
  last_with_replacement.replace = true;
  last_with_replacement.temporal_strategy = TemporalStrategy::kLast;
  EXPECT_EQ(field_of(last_with_replacement), "temporal_strategy");
  SampleOptions out_edges = at_time(5);
  out_edges.direction = EdgeDirection::kOut;
  EXPECT_EQ(field_of(out_edges), "direction");
  SampleOptions labor = at_time(5);
  labor.labor.enabled = true;
  EXPECT_EQ(field_of(labor), "method");
  EXPECT_EQ(field_of(at_time(5, /*seeds=*/2)), "seed_times");
  // A graph without edge times cannot answer a timed call.
  const LocalNeighborSource untimed(testing::star_graph(10));
  EXPECT_THROW(untimed.sample_neighbors(seed, 3, at_time(5)), Error);
  const NeighborSampler sampler(&source, {.fanouts = {2}});
  EXPECT_THROW(sampler.sample(seed, at::zeros({2}, at::kLong), 0, 0), OptionError);
}

}  // namespace
}  // namespace graphloom::sampling
