// The loader's pipeline: workers claim batch indices under a mutex (held only for bookkeeping,
// never while sampling or gathering), park results by index, and the consumer takes them in
// order. Claims stay within `prefetch` of the consumer, which bounds memory.
#include "graphloom/loader/data_loader.h"

#include <ATen/ATen.h>
#include <omp.h>

#include <tuple>
#include <vector>

#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/base/timer.h"
#include "graphloom/sampling/pyg_edges.h"

namespace graphloom::loader {

namespace {

// The batch's seeds from the pairs' endpoints `ends` (src, dst, then the negatives, each in
// pair order): every distinct node once, and the row of each endpoint among them. With the
// pairs' `times`, every distinct (node, time) once, each endpoint at its pair's time.
std::tuple<at::Tensor, at::Tensor, at::Tensor> distinct_seeds(const std::vector<at::Tensor>& ends,
                                                              const at::Tensor& times) {
  const at::Tensor nodes = at::cat(ends);
  if (!times.defined()) {
    auto [seeds, position] = at::_unique(nodes, /*sorted=*/true, /*return_inverse=*/true);
    return {seeds, at::Tensor(), position};
  }
  std::vector<at::Tensor> end_times;
  for (const at::Tensor& end : ends) {
    const int64_t per_pair = times.numel() > 0 ? end.numel() / times.numel() : 0;
    end_times.push_back(times.repeat_interleave(per_pair));
  }
  const auto [rows, position, counts] =
      at::unique_dim(at::stack({nodes, at::cat(end_times)}, 1), 0, /*sorted=*/true,
                     /*return_inverse=*/true);
  return {rows.select(1, 0).contiguous(), rows.select(1, 1).contiguous(), position};
}

}  // namespace

void check_pipeline_options(const DataLoaderOptions& options) {
  if (options.num_workers < 1)
    throw OptionError("num_workers", fmt::format("must be >= 1, got {}", options.num_workers));
  if (options.prefetch < options.num_workers)
    throw OptionError("prefetch", fmt::format("({}) must be at least `num_workers` ({})",
                                              options.prefetch, options.num_workers));
  if (options.threads_per_worker < 0)
    throw OptionError("threads_per_worker",
                      fmt::format("must be >= 0, got {}", options.threads_per_worker));
  if (options.pin_memory && cuda_device_count() == 0) {
    throw OptionError("pin_memory",
                      "pins host memory for a CUDA device, and this build or "
                      "machine has none (a CPU-only torch, or no visible GPU)");
  }
}

DataLoader::DataLoader(Pipeline pipeline, DataLoaderOptions options)
    : pipeline_(pipeline),
      options_(std::move(options)),
      buffers_(static_cast<std::size_t>(std::max(options_.prefetch, 1)) + 2, options_.pin_memory) {
  GL_CHECK(pipeline_.items != nullptr, "DataLoader needs an item sampler");
  GL_CHECK(pipeline_.negatives == nullptr || pipeline_.negatives_per_pair >= 1,
           "DataLoader: negatives per pair must be >= 1, got {}", pipeline_.negatives_per_pair);
  check_pipeline_options(options_);
  const features::FeatureSource* features = pipeline_.features;
  for (const std::string& name : options_.feature_names) {
    GL_CHECK(features != nullptr && features->has(name), "DataLoader: no feature named '{}'", name);
  }
  if (!options_.label_name.empty()) {
    GL_CHECK(features != nullptr && features->has(options_.label_name),
             "DataLoader: no labels named '{}'", options_.label_name);
  }
}

DataLoader::DataLoader(const sampling::ItemSampler* items, const sampling::NeighborSampler* sampler,
                       const features::FeatureSource* features, DataLoaderOptions options)
    : DataLoader(Pipeline{.items = items, .neighbors = sampler, .features = features},
                 std::move(options)) {
  GL_CHECK(sampler != nullptr, "DataLoader needs a neighbor sampler");
}

DataLoader::~DataLoader() { stop(); }

void DataLoader::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void DataLoader::start_epoch(uint64_t epoch, int64_t first_batch) {
  stop();
  started_ = false;
  epoch_ = epoch;
  items_ = pipeline_.items->batches(epoch);
  GL_CHECK(first_batch >= 0 && first_batch <= static_cast<int64_t>(items_.size()),
           "cannot start epoch {} at batch {}: it has {} batches", epoch, first_batch,
           items_.size());
  stopping_ = false;
  next_to_issue_ = first_batch;
  next_to_consume_ = first_batch;
  ready_.clear();
  for (int w = 0; w < options_.num_workers; ++w) workers_.emplace_back([this] { work(); });
  started_ = true;
}

// The pair stage and neighbor sampling.
sampling::MiniBatch DataLoader::sample(int64_t index) const {
  const at::Tensor& items = items_[static_cast<std::size_t>(index)];
  sampling::PairBatch pairs;
  const bool pair_stage = pipeline_.pairs || pipeline_.negatives != nullptr;
  const bool timed = pipeline_.timed_items;
  at::Tensor seeds = items;
  at::Tensor seed_times;
  if (!pair_stage && timed) {
    GL_CHECK(items.dim() == 2 && items.size(1) == 2,
             "DataLoader: timed items must be [B, 2] (node, time) rows, got shape [{}]",
             fmt::join(items.sizes(), ", "));
    seeds = items.select(1, 0).contiguous();
    seed_times = items.select(1, 1).contiguous();
  } else if (pair_stage) {
    const int64_t columns = items.dim() == 2 ? items.size(1) - (timed ? 1 : 0) : 0;
    GL_CHECK(columns == 2 || columns == 3,
             "DataLoader: the pair stage needs [B, 2] or [B, 3] items{}, got shape [{}]",
             timed ? " and a time column" : "", fmt::join(items.sizes(), ", "));
    pairs.src = items.select(1, 0).contiguous();
    pairs.dst = items.select(1, 1).contiguous();
    if (columns == 3) pairs.input_id = items.select(1, 2).contiguous();
    if (timed) pairs.time = items.select(1, columns).contiguous();
    std::vector<at::Tensor> ends{pairs.src, pairs.dst};
    if (pipeline_.negatives == nullptr) {
      pairs.negative_src = pairs.negative_dst = at::empty({0}, pairs.src.options());
    } else {
      sampling::NegativeEdges negative = pipeline_.negatives->sample(
          pairs.src, pairs.dst, pipeline_.negatives_per_pair,
          stream_key({pipeline_.negative_seed, epoch_, static_cast<uint64_t>(index),
                      pipeline_.negative_stream}));
      pairs.negative_src = std::move(negative.src);
      pairs.negative_dst = std::move(negative.dst);
      ends.push_back(pairs.negative_dst);
      if (pipeline_.negatives->corrupts_src()) ends.push_back(pairs.negative_src);
    }
    std::tie(seeds, seed_times, pairs.position) = distinct_seeds(ends, pairs.time);
  }
  sampling::MiniBatch batch;
  if (pipeline_.neighbors != nullptr) {
    batch = pipeline_.neighbors->sample(seeds, seed_times, epoch_, static_cast<uint64_t>(index));
  } else {
    batch.index = index;
    batch.seeds = seeds;
    batch.seed_times = seed_times;
  }
  batch.pairs = std::move(pairs);
  return batch;
}

sampling::MiniBatch DataLoader::prepare(int64_t index) const {
  Timer timer;
  sampling::MiniBatch batch = sample(index);
  if (options_.pyg_layout) batch.pyg = sampling::pyg_edges(batch);
  batch.sample_seconds = timer.seconds();
  timer.reset();
  for (const std::string& name : options_.feature_names) {
    batch.features[name] = gather(name, batch.input_nodes());
  }
  if (!options_.label_name.empty()) {
    batch.labels =
        gather(options_.label_name, options_.pyg_layout ? batch.input_nodes() : batch.seeds);
  }
  batch.fetch_seconds = timer.seconds();
  return batch;
}

at::Tensor DataLoader::gather(const std::string& name, const at::Tensor& ids) const {
  const features::FeatureInfo info = pipeline_.features->info(name);
  at::Tensor rows = buffers_.take(name, info.dtype, info.row_shape, ids.numel());
  // Blocks sampled on a device name their nodes there; the rows are gathered on the host.
  pipeline_.features->gather(name, ids.cpu(), rows);
  return rows;
}

void DataLoader::work() {
  if (options_.threads_per_worker > 0) omp_set_num_threads(options_.threads_per_worker);
  const auto total = static_cast<int64_t>(items_.size());
  while (true) {
    int64_t index = 0;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] {
        return stopping_ || next_to_issue_ >= total ||
               next_to_issue_ < next_to_consume_ + options_.prefetch;
      });
      if (stopping_ || next_to_issue_ >= total) return;
      index = next_to_issue_++;
    }
    Result result;
    try {
      result.batch = prepare(index);
    } catch (...) {
      result.error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      ready_[index] = std::move(result);
    }
    changed_.notify_all();
  }
}

std::optional<sampling::MiniBatch> DataLoader::next() {
  GL_CHECK(started_, "DataLoader::next() called before start_epoch() or after a failed batch");
  if (next_to_consume_ >= static_cast<int64_t>(items_.size())) return std::nullopt;
  Result result;
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ready_.count(next_to_consume_) > 0; });
    auto node = ready_.extract(next_to_consume_);
    result = std::move(node.mapped());
    ++next_to_consume_;
  }
  changed_.notify_all();
  if (result.error) {
    stop();
    started_ = false;
    std::rethrow_exception(result.error);
  }
  return std::move(result.batch);
}

bool DataLoader::wait_next(std::chrono::milliseconds timeout) {
  if (!started_ || next_to_consume_ >= static_cast<int64_t>(items_.size())) return true;
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return ready_.count(next_to_consume_) > 0; });
}

void DataLoader::cancel() {
  stop();
  started_ = false;
}

}  // namespace graphloom::loader
