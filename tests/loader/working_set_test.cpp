// The working set of an epoch: the rows the DataLoader's own epoch gathers, counted, and a
// cache's misses on them: none when every row fits, fewer in a bigger cache.
#include "graphloom/loader/working_set.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/base/error.h"
#include "graphloom/io/generators.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/sampling/item_sampler.h"
#include "graphloom/sampling/local_neighbor_source.h"

namespace graphloom::loader {
namespace {

io::Dataset planted() {
  return io::generate_planted(
      {.num_nodes = 3000, .num_classes = 3, .avg_degree = 8, .feat_dim = 16, .seed = 2});
}

TEST(WorkingSet, CountsTheRowsTheLoadersEpochGathers) {
  const io::Dataset data = planted();
  const WorkingSetOptions options{.fanouts = {5, 5}, .batch_size = 128, .seed = 4};
  const WorkingSet set = estimate_working_set(data, options);
  // The same epoch through the DataLoader.
  const sampling::LocalNeighborSource source(data.graph);
  const sampling::NeighborSampler sampler(&source,
                                          {.fanouts = {5, 5}, .seed = 4, .edge_ids = false});
  const sampling::ItemSampler items(data.splits.at("train"),
                                    {.batch_size = 128, .shuffle = true, .seed = 4});
  DataLoader loader({.items = &items, .neighbors = &sampler},
                    {.feature_names = {}, .label_name = ""});
  loader.start_epoch(0);  // a run's first epoch
  int64_t gathered = 0;
  at::Tensor seen = at::zeros({3000}, at::kBool);
  while (auto batch = loader.next()) {
    gathered += batch->input_nodes().numel();
    seen.index_fill_(0, batch->input_nodes(), true);
  }
  EXPECT_EQ(set.epoch_batches, items.num_batches());
  EXPECT_EQ(set.batches, set.epoch_batches);
  EXPECT_EQ(set.rows_gathered, gathered);
  EXPECT_EQ(set.distinct_rows, seen.sum().item<int64_t>());
  EXPECT_LT(set.distinct_rows, set.rows_gathered);  // batches share rows
  EXPECT_EQ(set.row_bytes, 16 * 4);
  EXPECT_EQ(set.rows_missed, -1);
  const std::string report = describe_working_set(set, options);
  EXPECT_NE(report.find("distinct rows"), std::string::npos) << report;
}

TEST(WorkingSet, ACacheOfEveryRowMissesNoneAndABiggerCacheMissesFewer) {
  const io::Dataset data = planted();
  WorkingSetOptions options{.fanouts = {5, 5}, .batch_size = 128};
  options.cache_policy = features::CachePolicy::kStatic;
  options.cache_bytes = 3000 * 16 * 4;
  EXPECT_EQ(estimate_working_set(data, options).rows_missed, 0);
  options.cache_policy = features::CachePolicy::kSieve;
  options.cache_bytes = 300 * 16 * 4;
  const WorkingSet small = estimate_working_set(data, options);
  options.cache_bytes = 1500 * 16 * 4;
  const WorkingSet large = estimate_working_set(data, options);
  EXPECT_GT(small.rows_missed, large.rows_missed);
  EXPECT_LE(small.rows_missed, small.next_rows_gathered);
  EXPECT_GT(small.next_rows_gathered, 0);
  EXPECT_GT(small.cold_rows_missed, small.rows_missed);  // the first epoch starts cold
  EXPECT_EQ(small.cache_rows, 300);
  options.max_batches = 2;
  EXPECT_EQ(estimate_working_set(data, options).batches, 2);
  options.cache_bytes = 0;
  try {
    estimate_working_set(data, options);
    ADD_FAILURE() << "a cache without a size accepted";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "cache_size");
  }
  options.split = "nope";
  try {
    estimate_working_set(data, options);
    ADD_FAILURE() << "a missing split accepted";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "split");
  }
}

}  // namespace
}  // namespace graphloom::loader
