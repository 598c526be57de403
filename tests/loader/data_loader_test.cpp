// DataLoader: in-order batches equal to direct sampling, the pair stage of link prediction,
// worker errors reaching the consumer, and clean shutdown mid-epoch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/temporal.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/sampling/local_neighbor_source.h"

namespace graphloom::loader {
namespace {

struct Fixture {
  Fixture() {
    at::manual_seed(0);
    graph::CooInput input{.src = at::randint(nodes, {20000}, at::kLong),
                          .dst = at::randint(nodes, {20000}, at::kLong),
                          .num_nodes = nodes};
    source = std::make_unique<sampling::LocalNeighborSource>(graph::csc_from_coo(input));
    sampler = std::make_unique<sampling::NeighborSampler>(
        source.get(), sampling::NeighborSamplerOptions{.fanouts = {4, 4}, .seed = 1});
    items = std::make_unique<sampling::ItemSampler>(
        at::arange(nodes, at::kLong),
        sampling::ItemSamplerOptions{.batch_size = 64, .shuffle = true});
    features.add("feat", at::randn({nodes, 8}));
    features.add("label", at::randint(3, {nodes}, at::kLong));
  }
  const int64_t nodes = 1000;
  std::unique_ptr<sampling::LocalNeighborSource> source;
  std::unique_ptr<sampling::NeighborSampler> sampler;
  std::unique_ptr<sampling::ItemSampler> items;
  features::TensorFeatureSource features;
};

// Link prediction's pipeline: pairs -> negatives -> blocks of the distinct endpoints -> rows.
TEST(DataLoader, PairStageGivesEachPairItsNegativesAndEncodesEveryEndpointOnce) {
  Fixture f;
  const at::Tensor pairs = at::randint(f.nodes, {300, 2}, at::kLong);
  const sampling::ItemSampler items(pairs, {.batch_size = 64, .shuffle = true});
  const sampling::UniformNegativeSampler negatives(f.nodes);
  constexpr int64_t k = 3;
  for (int workers : {1, 2}) {
    DataLoader loader({.items = &items,
                       .negatives = &negatives,
                       .negatives_per_pair = k,
                       .negative_seed = 7,
                       .negative_stream = 1,
                       .neighbors = f.sampler.get(),
                       .features = &f.features},
                      {.num_workers = workers, .prefetch = 2, .label_name = ""});
    loader.start_epoch(5);
    const auto expected = items.batches(5);
    int64_t count = 0;
    while (auto batch = loader.next()) {
      const sampling::PairBatch& p = batch->pairs;
      const at::Tensor& item = expected[count];
      ASSERT_EQ(p.num_pairs(), item.size(0));
      EXPECT_TRUE(at::equal(p.src, item.select(1, 0)));
      EXPECT_TRUE(at::equal(p.dst, item.select(1, 1)));
      const at::Tensor direct =
          negatives.sample(p.src, p.dst, k, stream_key({7, 5, static_cast<uint64_t>(count), 1}))
              .dst;
      EXPECT_TRUE(at::equal(p.negative_dst, direct));  // the same draws whoever runs the stage
      const at::Tensor endpoints = at::cat({p.src, p.dst, p.negative_dst});
      EXPECT_TRUE(at::equal(batch->seeds.index_select(0, p.position), endpoints));
      EXPECT_EQ(batch->seeds.numel(), std::get<0>(at::_unique(endpoints)).numel());  // distinct
      EXPECT_TRUE(at::equal(batch->blocks.back().dst_ids(), batch->seeds));
      EXPECT_TRUE(
          at::equal(batch->features.at("feat"), f.features.gather("feat", batch->input_nodes())));
      EXPECT_FALSE(batch->labels.defined());
      ++count;
    }
    EXPECT_EQ(count, 5);  // ceil(300 / 64)
  }
}

// Pairs with their ids (a third column) and no negatives; then negatives drawn at both ends,
// whose sources are encoded among the seeds after the destinations.
TEST(DataLoader, PairStageCarriesPairIdsAndEncodesDrawnSources) {
  Fixture f;
  const at::Tensor pairs = at::randint(f.nodes, {100, 2}, at::kLong);
  const at::Tensor with_ids = at::cat({pairs, at::arange(100, at::kLong).unsqueeze(1)}, 1);
  const sampling::ItemSampler items(with_ids, {.batch_size = 32, .shuffle = true});
  DataLoader positives({.items = &items, .pairs = true, .neighbors = f.sampler.get()},
                       {.feature_names = {}, .label_name = ""});
  positives.start_epoch(0);
  while (auto batch = positives.next()) {
    const sampling::PairBatch& p = batch->pairs;
    EXPECT_TRUE(at::equal(at::stack({p.src, p.dst}, 1), pairs.index_select(0, p.input_id)));
    EXPECT_EQ(p.negative_dst.numel(), 0);
    EXPECT_EQ(p.position.numel(), 2 * p.num_pairs());
  }
  const sampling::UniformNegativeSampler both(f.nodes, /*both_ends=*/true);
  DataLoader drawn(
      {.items = &items, .negatives = &both, .negatives_per_pair = 2, .neighbors = f.sampler.get()},
      {.feature_names = {}, .label_name = ""});
  drawn.start_epoch(0);
  while (auto batch = drawn.next()) {
    const sampling::PairBatch& p = batch->pairs;
    const at::Tensor ends = at::cat({p.src, p.dst, p.negative_dst, p.negative_src});
    EXPECT_TRUE(at::equal(batch->seeds.index_select(0, p.position), ends));
    EXPECT_FALSE(at::equal(p.negative_src, at::repeat_interleave(p.src, 2)));
  }
  const sampling::ItemSampler bad(at::zeros({4, 4}, at::kLong), {.batch_size = 4});
  DataLoader rejected({.items = &bad, .pairs = true}, {.feature_names = {}, .label_name = ""});
  rejected.start_epoch(0);
  EXPECT_THROW(rejected.next(), Error);  // [B, 4] items are no pairs
}

// Temporal pairs (a time column last): every endpoint and negative is a seed at its pair's
// time, a node at two times is two seeds, and no sampled edge of any hop is later than its
// seed.
TEST(DataLoader, TimedPairsMakeSeedsOfTheirEndpointsAndNegativesAtThePairsTime) {
  Fixture f;
  at::manual_seed(2);
  graph::CooInput input{.src = at::randint(f.nodes, {20000}, at::kLong),
                        .dst = at::randint(f.nodes, {20000}, at::kLong),
                        .num_nodes = f.nodes};
  const at::Tensor edge_time = at::randint(1000, {20000}, at::kLong);
  input.edge_time = edge_time;
  input.keep_edge_ids = true;
  const graph::CscGraph graph = graph::csc_from_coo(input);  // edge ids: COO positions
  const sampling::LocalNeighborSource source(
      graph::sorted_by_time(graph, at::Tensor(), graph.edge_time));
  const sampling::NeighborSampler sampler(&source, {.fanouts = {4, 4}, .seed = 1});
  // 40 nodes over 200 pairs: most nodes appear at several times.
  const at::Tensor pairs = at::randint(40, {200, 2}, at::kLong);
  const at::Tensor times = at::randint(300, 1000, {200}, at::kLong);
  const at::Tensor items_with_time =
      at::cat({pairs, at::arange(200, at::kLong).unsqueeze(1), times.unsqueeze(1)}, 1);
  const sampling::ItemSampler items(items_with_time, {.batch_size = 64, .shuffle = true});
  const sampling::UniformNegativeSampler negatives(f.nodes);
  DataLoader loader({.items = &items,
                     .negatives = &negatives,
                     .negatives_per_pair = 2,
                     .timed_items = true,
                     .neighbors = &sampler},
                    {.feature_names = {}, .label_name = ""});
  loader.start_epoch(0);
  int64_t shared_nodes = 0;
  while (auto batch = loader.next()) {
    const sampling::PairBatch& p = batch->pairs;
    EXPECT_TRUE(at::equal(p.time, times.index_select(0, p.input_id)));
    const at::Tensor ends = at::cat({p.src, p.dst, p.negative_dst});
    const at::Tensor end_times = at::cat({p.time, p.time, at::repeat_interleave(p.time, 2)});
    EXPECT_TRUE(at::equal(batch->seeds.index_select(0, p.position), ends));
    EXPECT_TRUE(at::equal(batch->seed_times.index_select(0, p.position), end_times));
    const int64_t distinct_pairs =
        std::get<0>(at::unique_dim(at::stack({ends, end_times}, 1), 0)).size(0);
    EXPECT_EQ(batch->seeds.numel(), distinct_pairs);  // each (node, time) once
    shared_nodes += batch->seeds.numel() - std::get<0>(at::_unique(batch->seeds)).numel();
    const auto* edge_time_of = edge_time.data_ptr<int64_t>();
    for (const sampling::Block& block : batch->blocks) {
      const auto* dst_time = block.src_times.data_ptr<int64_t>();
      const auto* indptr = block.indptr.data_ptr<int64_t>();
      const auto* ids = block.edge_ids.data_ptr<int64_t>();
      for (int64_t d = 0; d < block.num_dst; ++d) {
        for (int64_t e = indptr[d]; e < indptr[d + 1]; ++e) {
          ASSERT_LE(edge_time_of[ids[e]], dst_time[d]);
        }
      }
    }
  }
  EXPECT_GT(shared_nodes, 0);  // nodes seen at several times were kept apart
}

// Without a neighbor sampler (whole-graph models such as LightGCN) the seeds are the inputs.
TEST(DataLoader, WithoutNeighborSamplingTheSeedsAreTheInputNodes) {
  Fixture f;
  DataLoader loader({.items = f.items.get(), .features = &f.features}, {});
  loader.start_epoch(0);
  const auto batch = loader.next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->blocks.empty());
  EXPECT_TRUE(at::equal(batch->input_nodes(), batch->seeds));
  EXPECT_TRUE(at::equal(batch->features.at("feat"), f.features.gather("feat", batch->seeds)));
  EXPECT_FALSE(batch->pairs.defined());
}

TEST(DataLoader, YieldsEveryBatchInOrderWithItsRows) {
  Fixture f;
  for (int workers : {1, 3}) {
    DataLoader loader(f.items.get(), f.sampler.get(), &f.features,
                      {.num_workers = workers, .prefetch = 4});
    loader.start_epoch(2);
    const auto expected_seeds = f.items->batches(2);
    int64_t count = 0;
    while (auto batch = loader.next()) {
      ASSERT_EQ(batch->index, count);
      EXPECT_TRUE(at::equal(batch->seeds, expected_seeds[count]));
      const auto direct = f.sampler->sample(expected_seeds[count], 2, count);
      EXPECT_TRUE(at::equal(batch->input_nodes(), direct.input_nodes()));
      EXPECT_TRUE(
          at::equal(batch->features.at("feat"), f.features.gather("feat", direct.input_nodes())));
      EXPECT_TRUE(at::equal(batch->labels, f.features.gather("label", batch->seeds)));
      ++count;
    }
    EXPECT_EQ(count, loader.num_batches());
    EXPECT_EQ(count, 16);  // ceil(1000 / 64)
  }
}

// A feature source that fails on one particular node.
class FailingSource : public features::TensorFeatureSource {
 public:
  using TensorFeatureSource::gather;
  using TensorFeatureSource::TensorFeatureSource;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override {
    if (name == "label" && (ids == 500).any().item<bool>()) GL_THROW("disk on fire at node 500");
    TensorFeatureSource::gather(name, ids, out);
  }
};

TEST(DataLoader, WorkerErrorReachesTheConsumerWithItsMessage) {
  Fixture f;
  const FailingSource failing(
      {{"feat", at::randn({f.nodes, 8})}, {"label", at::zeros({f.nodes}, at::kLong)}});
  const sampling::ItemSampler in_order(at::arange(f.nodes, at::kLong), {.batch_size = 100});
  DataLoader loader(&in_order, f.sampler.get(), &failing, {.num_workers = 2, .prefetch = 2});
  loader.start_epoch(0);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(loader.next().has_value());  // batches 0..4 fine
  try {
    loader.next();  // batch 5 holds node 500
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "disk on fire at node 500");
  }
}

TEST(DataLoader, DestroyingMidEpochStopsPromptly) {
  Fixture f;
  const auto start = std::chrono::steady_clock::now();
  {
    DataLoader loader(f.items.get(), f.sampler.get(), &f.features,
                      {.num_workers = 2, .prefetch = 2});
    loader.start_epoch(0);
    ASSERT_TRUE(loader.next().has_value());
    loader.start_epoch(1);  // restarting mid-epoch is fine too
    ASSERT_TRUE(loader.next().has_value());
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(DataLoader, RejectsBadOptions) {
  Fixture f;
  DataLoader unstarted(f.items.get(), f.sampler.get(), &f.features, {});
  EXPECT_THROW(unstarted.next(), Error);
  EXPECT_THROW(DataLoader(f.items.get(), f.sampler.get(), &f.features, {.num_workers = 0}), Error);
  EXPECT_THROW(
      DataLoader(f.items.get(), f.sampler.get(), &f.features, {.num_workers = 2, .prefetch = 1}),
      Error);
  EXPECT_THROW(DataLoader(f.items.get(), f.sampler.get(), &f.features, {.feature_names = {"x"}}),
               Error);
}

}  // namespace
}  // namespace graphloom::loader
