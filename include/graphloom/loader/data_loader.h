// DataLoader: the bounded pipeline items -> [pairs] -> sample -> fetch that feeds training
// (GraphBolt's ItemSampler -> sample_negative -> sample_neighbor -> fetch_feature, DGL's
// DataLoader). Worker threads prepare batches ahead of the consumer; batches come out in order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "graphloom/features/feature_source.h"
#include "graphloom/loader/buffer_pool.h"
#include "graphloom/sampling/block.h"
#include "graphloom/sampling/item_sampler.h"
#include "graphloom/sampling/negative_sampler.h"
#include "graphloom/sampling/neighbor_sampler.h"

namespace graphloom::loader {

struct DataLoaderOptions {
  // One worker whose kernels use every thread was measured fastest here, with the least memory
  // (each batch's feature rows are hundreds of MB on big graphs): see `graphloom bench loader`.
  int num_workers = 1;         // batches prepared concurrently
  int prefetch = 1;            // most batches prepared ahead of the consumer (>= num_workers)
  int threads_per_worker = 0;  // OpenMP threads inside each worker's kernels (0 = inherit)
  std::vector<std::string> feature_names{"feat"};  // rows gathered for the input nodes
  std::string label_name = "label";                // rows gathered for the seeds ("" = none)
  // PyG's batches: also build MiniBatch::pyg in the worker, and gather the labels of every
  // input node (PyG's `y`; the seeds' are its first rows, since seeds lead the input nodes).
  bool pyg_layout = false;
  // Feature rows gathered into pinned (page-locked) host buffers, local and remote rows alike,
  // so that a CUDA device copies them without blocking (torch's DataLoader pin_memory). Needs a
  // CUDA build and device. The buffers are pooled: a consumer keeps each batch until the
  // copies that read it are done (DeviceStager's StagedBatch waits for them when it goes).
  bool pin_memory = false;
};

// Throws graphloom::OptionError, naming the field (num_workers, prefetch), when the worker and
// prefetch counts cannot work together. The DataLoader checks this itself; commands call it
// first to fail before loading anything.
void check_pipeline_options(const DataLoaderOptions& options);

// The stages a batch goes through; every one but the items is optional. They must outlive the
// loader.
struct Pipeline {
  const sampling::ItemSampler* items = nullptr;
  // The pair stage (link prediction), on when `pairs` is set or `negatives` given: the items
  // are [B, 2] (src, dst) pairs, or [B, 3] whose third column is the pair's id (passed on as
  // PairBatch::input_id). With `negatives`, each pair is given `negatives_per_pair` corrupted
  // destinations drawn with the random key (negative_seed, epoch, batch, negative_stream). The
  // batch's seeds are the pairs' distinct endpoints (MiniBatch::pairs says where each one is).
  bool pairs = false;
  const sampling::NegativeSampler* negatives = nullptr;
  int64_t negatives_per_pair = 1;
  uint64_t negative_seed = 0;
  uint64_t negative_stream = 0;  // e.g. the rank, so ranks draw different negatives
  // Temporal batches: each item's last column is its time: [B, 2] (node, time) rows, or with
  // the pair stage [B, 3] (src, dst, time) or [B, 4] (src, dst, id, time). Each seed is sampled
  // at its time (NeighborSampler::sample with seed times); a pair's endpoints and negatives
  // take the pair's time, and a node seen at two times is two seeds.
  bool timed_items = false;
  // Blocks of the seeds; null: the seeds are the input nodes (models that do not sample).
  const sampling::NeighborSampler* neighbors = nullptr;
  const features::FeatureSource* features = nullptr;  // rows of DataLoaderOptions' names
};

class DataLoader {
 public:
  DataLoader(Pipeline pipeline, DataLoaderOptions options);
  // items -> sample -> fetch. The samplers and the feature source must outlive the loader.
  DataLoader(const sampling::ItemSampler* items, const sampling::NeighborSampler* sampler,
             const features::FeatureSource* features, DataLoaderOptions options);
  // Stops the workers (also mid-epoch) and joins them.
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Starts producing the batches of `epoch` from batch `first_batch` on (stopping any epoch
  // still running). Batch i of an epoch is the same whichever batch the epoch started from
  // (every random draw is keyed by epoch and batch): a run resumed mid-epoch continues exactly.
  void start_epoch(uint64_t epoch, int64_t first_batch = 0);
  // The next batch in order; std::nullopt after the last one. A worker's exception is
  // rethrown here, with its message, when its batch is due.
  std::optional<sampling::MiniBatch> next();
  // Waits at most `timeout` for the next batch; true when next() will not block. A caller that
  // must stay responsive (the Python package checks for Ctrl-C) waits in slices.
  bool wait_next(std::chrono::milliseconds timeout);
  // Stops the workers mid-epoch (a consumer that stopped early); start_epoch() starts again.
  void cancel();
  int64_t num_batches() const { return pipeline_.items->num_batches(); }

 private:
  struct Result {
    std::optional<sampling::MiniBatch> batch;
    std::exception_ptr error;
  };
  void work();
  sampling::MiniBatch prepare(int64_t index) const;
  sampling::MiniBatch sample(int64_t index) const;
  at::Tensor gather(const std::string& name, const at::Tensor& ids) const;
  void stop();

  Pipeline pipeline_;
  DataLoaderOptions options_;

  uint64_t epoch_ = 0;
  bool started_ = false;           // start_epoch() completed
  std::vector<at::Tensor> items_;  // this epoch's batches of items
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  int64_t next_to_issue_ = 0;
  int64_t next_to_consume_ = 0;
  std::map<int64_t, Result> ready_;
  std::vector<std::thread> workers_;
  // Batches alive at once: up to `prefetch` issued, plus the consumer's current and previous.
  mutable BufferPool buffers_;
};

}  // namespace graphloom::loader
