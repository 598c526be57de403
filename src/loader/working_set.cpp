// estimate_working_set (working_set.h): the epoch's input nodes, counted and replayed through a
// cache whose backing rows are one byte wide, so that the replay reads no feature bytes: a
// policy's choices depend only on the ids it sees and how many rows fit.
#include "graphloom/loader/working_set.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "graphloom/base/error.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/sampling/item_sampler.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"

namespace graphloom::loader {
namespace {

// The input nodes of the first `count` batches of `epoch`.
std::vector<at::Tensor> epoch_inputs(const sampling::NeighborSampler& sampler,
                                     const sampling::ItemSampler& items, uint64_t epoch,
                                     int64_t count) {
  const std::vector<at::Tensor> batches = items.batches(epoch);
  std::vector<at::Tensor> inputs;
  for (int64_t b = 0; b < count; ++b) {
    inputs.push_back(sampler.sample(batches[b], epoch, static_cast<uint64_t>(b)).input_nodes());
  }
  return inputs;
}

// The rows the cache of `options` misses over `epochs` replayed in order, per epoch, with its
// capacity in rows.
std::pair<int64_t, std::vector<int64_t>> replayed_misses(
    const std::vector<std::vector<at::Tensor>>& epochs, const io::Dataset& dataset,
    int64_t row_bytes, const WorkingSetOptions& options) {
  const int64_t n = dataset.num_nodes();
  const int64_t capacity_rows = options.cache_bytes / std::max<int64_t>(row_bytes, 1);
  const features::TensorFeatureSource one_byte_rows({{"feat", at::zeros({n, 1}, at::kChar)}});
  features::CacheOptions cache{.policy = options.cache_policy, .capacity_bytes = capacity_rows};
  if (cache.policy == features::CachePolicy::kStatic) {
    cache.static_rows = features::rows_by_reference_count(dataset.graph.indices, n);
  }
  const features::CachedFeatureSource replay(one_byte_rows, "feat", std::move(cache));
  std::vector<int64_t> misses;
  for (const std::vector<at::Tensor>& epoch : epochs) {
    replay.stats(/*reset=*/true);
    for (const at::Tensor& ids : epoch) replay.gather("feat", ids);
    misses.push_back(replay.stats().misses);
  }
  return {replay.capacity_rows(), misses};
}

}  // namespace

WorkingSet estimate_working_set(const io::Dataset& dataset, const WorkingSetOptions& options) {
  const auto feat = dataset.node_features.find("feat");
  if (feat == dataset.node_features.end()) {
    throw OptionError("working_set", fmt::format("'{}' has no node feature 'feat'", dataset.name));
  }
  const auto split = dataset.splits.find(options.split);
  if (split == dataset.splits.end()) {
    throw OptionError("split",
                      fmt::format("'{}' has no node split '{}'", dataset.name, options.split));
  }
  sampling::check_fanouts(options.fanouts);
  if (options.cache_policy != features::CachePolicy::kNone && options.cache_bytes <= 0) {
    throw OptionError("cache_size", fmt::format("the {} cache replayed needs a size (e.g. 256M)",
                                                name_of(options.cache_policy)));
  }
  const sampling::LocalNeighborSource source(dataset.graph);
  const sampling::NeighborSampler sampler(
      &source, {.fanouts = options.fanouts, .seed = options.seed, .edge_ids = false});
  const sampling::ItemSampler items(
      split->second, {.batch_size = options.batch_size, .shuffle = true, .seed = options.seed});
  WorkingSet set;
  set.epoch_batches = items.num_batches();
  set.batches = options.max_batches > 0 ? std::min(options.max_batches, set.epoch_batches)
                                        : set.epoch_batches;
  set.num_rows = feat->second.size(0);
  set.row_bytes = feat->second.nbytes() / std::max<int64_t>(set.num_rows, 1);
  const std::vector<at::Tensor> inputs = epoch_inputs(sampler, items, 0, set.batches);
  at::Tensor seen = at::zeros({set.num_rows}, at::kBool);
  for (const at::Tensor& ids : inputs) {
    set.rows_gathered += ids.numel();
    seen.index_fill_(0, ids, true);
  }
  set.distinct_rows = seen.sum().item<int64_t>();
  if (options.cache_policy != features::CachePolicy::kNone) {
    const std::vector<at::Tensor> next = epoch_inputs(sampler, items, 1, set.batches);
    for (const at::Tensor& ids : next) set.next_rows_gathered += ids.numel();
    const auto [rows, misses] = replayed_misses({inputs, next}, dataset, set.row_bytes, options);
    set.cache_rows = rows;
    set.cold_rows_missed = misses[0];
    set.rows_missed = misses[1];
  }
  return set;
}

std::string describe_working_set(const WorkingSet& set, const WorkingSetOptions& options) {
  const auto hit_percent = [](int64_t missed, int64_t gathered) {
    return 100.0 * (1.0 - static_cast<double>(missed) /
                              static_cast<double>(std::max<int64_t>(gathered, 1)));
  };
  const auto size = [&](int64_t rows) {
    const double bytes = static_cast<double>(rows) * static_cast<double>(set.row_bytes);
    return bytes >= 1e9 ? fmt::format("{:.2f} GB", bytes / 1e9)
                        : fmt::format("{:.1f} MB", bytes / 1e6);
  };
  std::string text = fmt::format(
      "working set of an epoch ({} batches of {} '{}' seeds, fanouts {}; {} of them replayed)\n"
      "  rows gathered   {} ({} of 'feat', {} B rows)\n"
      "  distinct rows   {} of {} ({:.1f}%, {})\n",
      set.epoch_batches, options.batch_size, options.split, fmt::join(options.fanouts, ","),
      set.batches, set.rows_gathered, size(set.rows_gathered), set.row_bytes, set.distinct_rows,
      set.num_rows,
      100.0 * static_cast<double>(set.distinct_rows) /
          static_cast<double>(std::max<int64_t>(set.num_rows, 1)),
      size(set.distinct_rows));
  if (set.rows_missed >= 0) {
    text += fmt::format(
        "  {} cache of {} rows ({}): hit rate {:.1f}% in the first epoch, {:.1f}% in the next; "
        "{} rows read per epoch once warm ({}, before block rounding)\n",
        name_of(options.cache_policy), set.cache_rows, size(set.cache_rows),
        hit_percent(set.cold_rows_missed, set.rows_gathered),
        hit_percent(set.rows_missed, set.next_rows_gathered), set.rows_missed,
        size(set.rows_missed));
  }
  return text;
}

}  // namespace graphloom::loader
