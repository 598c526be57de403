// DataLoader: in-order batches equal to direct sampling, worker errors reaching the consumer,
// and clean shutdown mid-epoch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>

#include "graphloom/base/error.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/graph/build.h"
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
