// The tensor-op sampler on the CPU against the C++ kernel: the same streams, the same picks,
// the same blocks, bit for bit; and its refusals.
#include "graphloom/sampling/tensor_neighbor_source.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/ranges.h>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/graph/build.h"
#include "graphloom/sampling/labor.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "sampling_fixtures.h"
#include "tensor_random_streams.h"  // internal to the sampling module

namespace graphloom::sampling {
namespace {

const c10::Device kCpu(c10::DeviceType::CPU);
// On the CPU a pinned CSC is the graph's own arrays, read in place: the placement's code path
// (which arrays are viewed, which copied) runs here as on a GPU.
constexpr std::array kPlacements = {CscPlacement::kDevice, CscPlacement::kPinned};

std::vector<int64_t> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).cpu().contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

// Every kind of column at once: nodes without in-edges, short columns, columns a little above
// and below the fanouts, and hubs of 300-2000 in-edges; edge ids a permutation.
graph::CscGraph mixed_degree_graph(int64_t nodes = 400) {
  at::manual_seed(7);
  std::vector<at::Tensor> src, dst;
  src.push_back(at::randint(nodes, {3 * nodes}, at::kLong));
  dst.push_back(at::randint(nodes / 2, {3 * nodes}, at::kLong));  // the upper half has none
  for (const int64_t hub : {int64_t{3}, int64_t{11}, int64_t{50}}) {
    const int64_t degree = 300 + 850 * (hub % 3);
    src.push_back(at::randint(nodes, {degree}, at::kLong));
    dst.push_back(at::full({degree}, hub, at::kLong));
  }
  graph::CooInput input;
  input.src = at::cat(src);
  input.dst = at::cat(dst);
  input.num_nodes = nodes;
  input.keep_edge_ids = true;
  graph::CscGraph graph = graph::csc_from_coo(input);
  graph.edge_ids = at::randperm(graph.num_edges(), at::kLong);
  return graph;
}

void expect_same(const SampledEdges& want, const SampledEdges& got, const std::string& what) {
  EXPECT_EQ(to_vector(want.indptr), to_vector(got.indptr)) << what;
  EXPECT_EQ(to_vector(want.neighbors), to_vector(got.neighbors)) << what;
  ASSERT_EQ(want.edge_ids.defined(), got.edge_ids.defined()) << what;
  if (want.edge_ids.defined()) {
    EXPECT_EQ(to_vector(want.edge_ids), to_vector(got.edge_ids)) << what;
  }
}

TEST(TensorRandomStreams, DrawExactlyWhatTheScalarStreamsDraw) {
  const std::vector<uint64_t> keys = {
      0, 1, 42, 0x8000000000000000ULL, ~uint64_t{0}, stream_key({5, 9})};
  at::Tensor key_tensor = at::empty({static_cast<int64_t>(keys.size())}, at::kLong);
  for (std::size_t i = 0; i < keys.size(); ++i)
    key_tensor[static_cast<int64_t>(i)] = static_cast<int64_t>(keys[i]);
  // Bounds near 2^62 reject about a quarter of their draws: the redraws must match too.
  const std::vector<int64_t> bounds = {
      1, 2, 3, 1000, (int64_t{1} << 40) + 7, (int64_t{1} << 62) + 12345, (int64_t{1} << 62) + 1};
  TensorRandomStreams streams(key_tensor);
  std::vector<RandomStream> scalar;
  for (const uint64_t key : keys) scalar.emplace_back(key);
  const at::Tensor all = at::ones({key_tensor.numel()}, at::kBool);
  for (int round = 0; round < 40; ++round) {
    const int64_t bound = bounds[round % bounds.size()];
    // Odd rounds draw in every other lane only; the others must not advance.
    const at::Tensor active = round % 2 == 0 ? all : at::arange(key_tensor.numel()) % 2 == 0;
    const std::vector<int64_t> got =
        to_vector(streams.uniform(at::full({key_tensor.numel()}, bound, at::kLong), active));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!active[static_cast<int64_t>(i)].item<bool>()) continue;
      EXPECT_EQ(static_cast<uint64_t>(got[i]), scalar[i].uniform(static_cast<uint64_t>(bound)))
          << "round " << round << " lane " << i << " bound " << bound;
    }
  }
}

TEST(TensorRandomStreams, KeysAreTheScalarStreamKeys) {
  const at::Tensor parts = at::tensor({int64_t{0}, int64_t{17}, int64_t{-1}, int64_t{1} << 50});
  const std::vector<int64_t> got = to_vector(stream_keys(99, parts));
  for (int64_t i = 0; i < parts.numel(); ++i) {
    EXPECT_EQ(static_cast<uint64_t>(got[i]),
              stream_key({99, static_cast<uint64_t>(parts[i].item<int64_t>())}));
  }
}

TEST(TensorNeighborSource, PicksWhatTheCppKernelPicksForEveryFanoutAndMode) {
  const graph::CscGraph graph = mixed_degree_graph();
  const LocalNeighborSource cpp(graph);
  // Duplicates, hubs, empty columns, in no particular order.
  const at::Tensor seeds =
      at::cat({at::randint(graph.num_nodes, {300}, at::kLong),
               at::tensor({int64_t{3}, int64_t{11}, int64_t{50}, int64_t{3}, int64_t{399}})});
  for (const CscPlacement placement : kPlacements) {
    const TensorNeighborSource tensor(graph, kCpu, placement);
    for (const bool replace : {false, true}) {
      for (const int64_t fanout : {-1, 0, 1, 2, 5, 10, 25, 64, 65, 200}) {
        for (const bool edge_ids : {true, false}) {
          SampleOptions options;
          options.replace = replace;
          options.random_key = 1234 + static_cast<uint64_t>(fanout);
          options.edge_ids = edge_ids;
          expect_same(cpp.sample_neighbors(seeds, fanout, options),
                      tensor.sample_neighbors(seeds, fanout, options),
                      fmt::format("placement {} replace {} fanout {} edge ids {}",
                                  static_cast<int>(placement), replace, fanout, edge_ids));
        }
      }
    }
  }
}

// Weights of every kind on the mixed-degree graph: zeros (never picked), a few heavy edges,
// columns whose weights are all zero; the alias tables built by either source alike.
TEST(TensorNeighborSource, WeightedPicksWithReplacementAreTheCppKernelsPicks) {
  graph::CscGraph graph = mixed_degree_graph();
  at::manual_seed(11);
  at::Tensor weights = at::rand({graph.num_edges()}, at::kDouble);
  weights.masked_fill_(at::rand({graph.num_edges()}) < 0.3, 0.0);
  weights.masked_fill_(at::rand({graph.num_edges()}) < 0.02, 50.0);
  weights.narrow(0, 0, 40).zero_();  // the first columns: no positive weight at all
  graph.weights = weights;
  const LocalNeighborSource cpp(graph);
  const TensorNeighborSource tensor(graph, kCpu);
  const TensorNeighborSource pinned(graph, kCpu, CscPlacement::kPinned);
  const at::Tensor seeds =
      at::cat({at::randint(graph.num_nodes, {300}, at::kLong),
               at::tensor({int64_t{0}, int64_t{3}, int64_t{11}, int64_t{50}, int64_t{3}})});
  for (const auto& [fanout, replace] : std::vector<std::pair<int64_t, bool>>{{-1, false},
                                                                             {0, true},
                                                                             {1, true},
                                                                             {5, true},
                                                                             {25, true},
                                                                             {80, true},
                                                                             {1, false},
                                                                             {5, false},
                                                                             {25, false},
                                                                             {64, false}}) {
    SampleOptions options;
    options.weighted = true;
    options.replace = replace;
    options.random_key = 99 + static_cast<uint64_t>(fanout);
    const SampledEdges want = cpp.sample_neighbors(seeds, fanout, options);
    const std::string what = fmt::format("weighted, fanout {} replace {}", fanout, replace);
    expect_same(want, tensor.sample_neighbors(seeds, fanout, options), what);
    expect_same(want, pinned.sample_neighbors(seeds, fanout, options), what + ", pinned");
    // The law, not only the agreement: a zero weight is never picked.
    if (want.edge_ids.defined() && want.edge_ids.numel() > 0) {
      const at::Tensor by_id = at::empty_like(weights);
      by_id.index_put_({graph.edge_ids}, weights);
      EXPECT_GT(by_id.index_select(0, want.edge_ids).min().item<double>(), 0.0);
    }
  }
}

// Three edge types over the mixed-degree graph's edges (hubs included), int16 types; a
// seed's stream serves its type segments in order, so every mode must agree bit for bit.
// Columns whose weight sits on a few heavy edges: once those are picked, redraws keep hitting
// them and picks come from the draw over the fixed-point weights left, on both sources alike.
TEST(TensorNeighborSource, WeightedPicksWithoutReplacementPastHeavyEdgesAreTheCppKernelsPicks) {
  graph::CooInput input;
  const int64_t columns = 50, per_column = 40;
  input.dst = at::arange(columns, at::kLong).repeat_interleave(per_column);
  input.src = at::randint(1000, {columns * per_column}, at::kLong);
  input.num_nodes = 1000;
  input.keep_edge_ids = true;
  graph::CscGraph graph = graph::csc_from_coo(input);
  at::manual_seed(3);
  at::Tensor weights = at::rand({graph.num_edges()}, at::kDouble) * 1e-3;
  weights.masked_fill_(at::rand({graph.num_edges()}) < 0.1, 1e6);  // ~4 heavy edges a column
  weights.masked_fill_(at::rand({graph.num_edges()}) < 0.2, 0.0);
  graph.weights = weights.to(at::kFloat);
  const LocalNeighborSource cpp(graph);
  const TensorNeighborSource tensor(graph, kCpu);
  const at::Tensor seeds = at::arange(columns, at::kLong);
  for (const int64_t fanout : {3, 8, 20, 32}) {
    SampleOptions options;
    options.weighted = true;
    options.random_key = 5 + static_cast<uint64_t>(fanout);
    const SampledEdges want = cpp.sample_neighbors(seeds, fanout, options);
    expect_same(want, tensor.sample_neighbors(seeds, fanout, options),
                fmt::format("fanout {}", fanout));
    // Distinct picks, every one of positive weight.
    for (int64_t c = 0; c < columns; ++c) {
      const at::Tensor picked = want.neighbors.slice(0, want.indptr[c].item<int64_t>(),
                                                     want.indptr[c + 1].item<int64_t>());
      EXPECT_EQ(std::get<0>(at::_unique(want.edge_ids.slice(0, want.indptr[c].item<int64_t>(),
                                                            want.indptr[c + 1].item<int64_t>())))
                    .numel(),
                picked.numel());
    }
  }
}

TEST(TensorNeighborSource, TypedGraphsPickWhatTheCppKernelPicksPerEdgeType) {
  const graph::CscGraph plain = mixed_degree_graph();
  graph::CooInput input;
  input.src = plain.indices.to(at::kLong);
  input.dst = at::repeat_interleave(plain.indptr.diff());
  input.edge_types = (at::randint(3, {plain.num_edges()}, at::kLong)).to(at::kShort);
  input.num_nodes = plain.num_nodes;
  input.keep_edge_ids = true;
  graph::CscGraph graph = graph::csc_from_coo(input);
  graph.weights = at::rand({graph.num_edges()}, at::kFloat)
                      .masked_fill_(at::rand({graph.num_edges()}) < 0.2, 0.0f);
  const LocalNeighborSource cpp(graph);
  const TensorNeighborSource tensor(graph, kCpu);
  const at::Tensor seeds =
      at::cat({at::randint(graph.num_nodes, {200}, at::kLong),
               at::tensor({int64_t{3}, int64_t{11}, int64_t{50}, int64_t{399}})});
  const std::vector<std::vector<int64_t>> type_fanouts = {{}, {2, 0, -1}, {5, 70, 1}, {3}};
  for (const bool replace : {false, true}) {
    for (const bool weighted : {false, true}) {
      for (const auto& per_type : type_fanouts) {
        const bool over_64 = std::ranges::any_of(per_type, [](int64_t f) { return f > 64; });
        if (weighted && !replace && over_64) continue;  // keys with logarithms: the CPU only
        SampleOptions options;
        options.replace = replace;
        options.weighted = weighted;
        options.edge_type_fanouts = per_type;
        options.random_key = 31;
        const std::string what = fmt::format("replace {} weighted {} type fanouts [{}]", replace,
                                             weighted, fmt::join(per_type, ","));
        const SampledEdges want = cpp.sample_neighbors(seeds, 4, options);
        const SampledEdges got = tensor.sample_neighbors(seeds, 4, options);
        expect_same(want, got, what);
        ASSERT_TRUE(got.edge_types.defined()) << what;
        EXPECT_EQ(to_vector(want.edge_types), to_vector(got.edge_types)) << what;
      }
    }
  }
}

// Out-edges: both sources sample the reversed graph (the tensor one places it on first use),
// plain and weighted alike.
TEST(TensorNeighborSource, OutEdgesPickWhatTheCppKernelPicks) {
  graph::CscGraph graph = mixed_degree_graph();
  graph.weights = at::rand({graph.num_edges()}, at::kFloat)
                      .masked_fill_(at::rand({graph.num_edges()}) < 0.2, 0.0f);
  const LocalNeighborSource cpp(graph);
  const at::Tensor seeds = at::randint(graph.num_nodes, {300}, at::kLong);
  for (const CscPlacement placement : kPlacements) {
    const TensorNeighborSource tensor(graph, kCpu, placement);
    for (const bool replace : {false, true}) {
      for (const bool weighted : {false, true}) {
        for (const int64_t fanout : {-1, 1, 4, 30}) {
          SampleOptions options;
          options.direction = EdgeDirection::kOut;
          options.replace = replace;
          options.weighted = weighted;
          options.random_key = 8 + static_cast<uint64_t>(fanout);
          expect_same(cpp.sample_neighbors(seeds, fanout, options),
                      tensor.sample_neighbors(seeds, fanout, options),
                      fmt::format("out-edges, placement {} replace {} weighted {} fanout {}",
                                  static_cast<int>(placement), replace, weighted, fanout));
        }
      }
    }
  }
}

// LABOR-0: the variates of the neighbors' global ids decide, in float64 on either source;
// typed graphs decide per edge-type segment with its own fanout.
TEST(TensorNeighborSource, LaborKeepsWhatTheCppKernelKeeps) {
  const graph::CscGraph plain = mixed_degree_graph();
  graph::CooInput input;
  input.src = plain.indices.to(at::kLong);
  input.dst = plain.destinations();
  input.edge_types = at::randint(2, {plain.num_edges()}, at::kLong).to(at::kShort);
  input.num_nodes = plain.num_nodes;
  const graph::CscGraph typed = graph::csc_from_coo(input);
  const at::Tensor seeds = at::cat({at::randint(plain.num_nodes, {300}, at::kLong),
                                    at::tensor({int64_t{3}, int64_t{11}, int64_t{50}})});
  for (const graph::CscGraph* graph : {&plain, &typed}) {
    const LocalNeighborSource cpp(*graph);
    const TensorNeighborSource tensor(*graph, kCpu);
    for (const int64_t fanout : {-1, 0, 2, 10, 64}) {
      SampleOptions options;
      options.labor = labor_variates(5, 1, static_cast<uint64_t>(fanout + 1), 0, {});
      options.first_node = 0;
      if (graph == &typed) options.edge_type_fanouts = {fanout, 3};
      const SampledEdges want = cpp.sample_neighbors(seeds, fanout, options);
      const SampledEdges got = tensor.sample_neighbors(seeds, fanout, options);
      expect_same(want, got, fmt::format("labor, typed {}, fanout {}", graph == &typed, fanout));
      if (graph == &typed) {
        EXPECT_EQ(to_vector(want.edge_types), to_vector(got.edge_types));
      }
    }
  }
  SampleOptions blended;
  blended.labor = labor_variates(5, 1, 1, 0, {.batch_dependency = 4});
  EXPECT_THROW(TensorNeighborSource(plain, kCpu).sample_neighbors(seeds, 5, blended), OptionError);
}

TEST(TensorNeighborSource, KeysAPartitionsStreamsByGlobalId) {
  graph::CscGraph graph = mixed_degree_graph();
  graph.edge_ids = at::Tensor();  // ids are then CSC positions
  const LocalNeighborSource cpp(graph);
  const TensorNeighborSource tensor(graph, kCpu);
  SampleOptions options;
  options.first_node = 1000;
  options.random_key = 5;
  const at::Tensor seeds = at::arange(1000, 1400, at::kLong);
  for (const int64_t fanout : {3, 10, 80}) {
    expect_same(cpp.sample_neighbors(seeds, fanout, options),
                tensor.sample_neighbors(seeds, fanout, options), fmt::format("fanout {}", fanout));
  }
}

TEST(TensorNeighborSource, NeighborSamplerBuildsTheSameBlocksOnEitherSource) {
  const graph::CscGraph graph = testing::random_graph(2000, 30000, 3);
  const LocalNeighborSource cpp(graph);
  const TensorNeighborSource tensor(graph, kCpu);
  NeighborSamplerOptions options;
  options.fanouts = {5, 10, 15};
  options.seed = 77;
  const NeighborSampler cpp_sampler(&cpp, options);
  const NeighborSampler tensor_sampler(&tensor, options);
  const at::Tensor seeds = at::randperm(2000, at::kLong).slice(0, 0, 64);
  for (uint64_t batch = 0; batch < 3; ++batch) {
    const MiniBatch want = cpp_sampler.sample(seeds, 2, batch);
    const MiniBatch got = tensor_sampler.sample(seeds, 2, batch);
    ASSERT_EQ(want.blocks.size(), got.blocks.size());
    for (std::size_t l = 0; l < want.blocks.size(); ++l) {
      EXPECT_EQ(to_vector(want.blocks[l].src_ids), to_vector(got.blocks[l].src_ids));
      EXPECT_EQ(to_vector(want.blocks[l].indptr), to_vector(got.blocks[l].indptr));
      EXPECT_EQ(to_vector(want.blocks[l].indices), to_vector(got.blocks[l].indices));
      EXPECT_EQ(to_vector(want.blocks[l].edge_ids), to_vector(got.blocks[l].edge_ids));
    }
  }
}

TEST(TensorNeighborSource, RefusesWhatItCannotSampleAndBadRequestsByName) {
  const graph::CscGraph graph = testing::star_graph(100, at::ones({100}, at::kFloat));
  const TensorNeighborSource tensor(graph, kCpu);
  const at::Tensor seeds = at::zeros({4}, at::kLong);
  SampleOptions weighted;
  weighted.weighted = true;  // without replacement, over 64 picks: logarithms, not yet
  EXPECT_THROW(tensor.sample_neighbors(seeds, 65, weighted), OptionError);
  SampleOptions labor_with_replacement;
  labor_with_replacement.labor = labor_variates(1, 0, 0, 0, {});
  labor_with_replacement.replace = true;  // refused by the C++ kernel alike
  EXPECT_THROW(tensor.sample_neighbors(seeds, 5, labor_with_replacement), OptionError);
  const TensorNeighborSource unweighted(testing::star_graph(100), kCpu);
  weighted.replace = true;
  EXPECT_THROW(unweighted.sample_neighbors(seeds, 5, weighted), OptionError);
  SampleOptions timed;  // a graph without edge times, as the C++ kernel refuses it
  timed.seed_times = at::zeros({4}, at::kLong);
  EXPECT_THROW(tensor.sample_neighbors(seeds, 5, timed), Error);
  EXPECT_THROW(tensor.sample_neighbors(at::tensor({int64_t{101}}), 5, {}), RangeError);
  EXPECT_THROW(tensor.sample_neighbors(seeds, -2, {}), OptionError);
  SampleOptions small_budget;
  small_budget.max_picks = 19;
  EXPECT_THROW(tensor.sample_neighbors(seeds, 5, small_budget), LimitError);
  try {
    const TensorNeighborSource on_cuda(graph, c10::Device("cuda:0"));
    // Only a machine with a GPU gets here; the cuda tests check that path.
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "device");
  }
}

}  // namespace
}  // namespace graphloom::sampling
