// TrainOptions::validate (the checks every task's options pass before anything is built) and
// the device they name for this process.
#include <fmt/format.h>

#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/train/train_options.h"
#include "graphloom/train/trainer.h"

namespace graphloom::train {
namespace {

// "must be >= 1, got 0" for `field` unless value >= least.
template <class T>
void check_at_least(const char* field, T value, T least) {
  if (value < least) throw OptionError(field, fmt::format("must be >= {}, got {}", least, value));
}

}  // namespace

void TrainOptions::validate() const {
  sampling::check_fanouts(fanouts);
  sampling::check_labor_options(labor);
  if (sampler == sampling::SamplingMethod::kLabor && graph_placement != GraphPlacement::kCpu &&
      labor.batch_dependency > 1) {
    throw OptionError("batch_dependency",
                      "LABOR's batch dependency is not in the device (tensor-op) sampler: use "
                      "--batch-dependency 1 or --graph-placement cpu");
  }
  if (sampler != sampling::SamplingMethod::kLabor && labor.importance_sampling != 0) {
    throw OptionError("importance_sampling",
                      "LABOR-*'s importance sampling needs the labor sampler (--sampler labor)");
  }
  if (temporal && sampler == sampling::SamplingMethod::kLabor) {
    throw OptionError("temporal",
                      "temporal sampling is built for the neighbor sampler (not --sampler labor)");
  }
  check_at_least("batch_size", batch_size, int64_t{1});
  check_at_least("epochs", epochs, int64_t{1});
  if (!(lr >= 0)) throw OptionError("lr", fmt::format("must be >= 0, got {}", lr));
  check_at_least("weight_decay", weight_decay, 0.0);
  check_at_least("patience", patience, int64_t{0});
  check_at_least("eval_every", eval_every, int64_t{0});
  check_at_least("eval_batch_size", eval_batch_size, int64_t{1});
  loader::check_pipeline_options({.num_workers = num_workers, .prefetch = prefetch});
  check_at_least("max_batches", max_batches, int64_t{0});
  check_at_least("check_sync_every", check_sync_every, int64_t{0});
  check_at_least("checkpoint_every", checkpoint_every, int64_t{0});
  if (checkpoint_every > 0 && checkpoint.empty()) {
    throw OptionError("checkpoint_every", "needs `checkpoint` FILE");
  }
  check_at_least("device_cache_bytes", device_cache_bytes, int64_t{0});
  const c10::Device parsed = parse_device(device, "device");
  if (sync.backend == SyncBackend::kNccl && !parsed.is_cuda()) {
    throw OptionError("dist_backend",
                      "nccl reduces CUDA tensors: it needs a CUDA `device` (cuda or cuda:N)");
  }
}

sampling::NeighborSamplerOptions TrainOptions::sampler_options() const {
  return {.fanouts = fanouts,
          .edge_type_fanouts = edge_type_fanouts,
          .seed = seed,
          .edge_ids = false,
          .method = sampler,
          .labor = labor,
          .temporal_strategy = temporal_strategy};
}

c10::Device training_device(const TrainOptions& options, const distributed::ProcessGroup* group) {
  const int local_rank = group != nullptr ? group->environment().local_rank : 0;
  return device_for_local_rank(parse_device(options.device, "device"), local_rank,
                               cuda_device_count());
}

}  // namespace graphloom::train
