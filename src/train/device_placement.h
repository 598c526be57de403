// Device placement (private to the train module): what the tasks share to train on a device:
// autocast of the dense layers, the feature rows placed for the device (pinned, resident or
// cached) and the training graph placed for the tensor-op sampler.
#pragma once

#include <c10/core/Device.h>

#include <map>
#include <memory>
#include <string>

#include "graphloom/features/device_rows.h"
#include "graphloom/sampling/tensor_neighbor_source.h"
#include "graphloom/train/train_options.h"
#include "graphloom/train/training_inputs.h"

namespace graphloom::train {

// Autocast of the dense layers on the training device while it lives (thread-local, as
// autocast is), in bfloat16 or float16; the sparse kernels widen their inputs back to float32.
class AutocastScope {
 public:
  AutocastScope(Precision precision, c10::Device device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
  c10::DeviceType device_type_;
};

// The "feat" rows placed for the device (features::DeviceRows), or null when the loader gathers
// them: what TrainOptions::feature_placement and device_cache_bytes ask, where the matrix is in
// this process's memory.
std::unique_ptr<features::DeviceRows> placed_rows(const TrainingInputs& inputs,
                                                  const TrainOptions& options, c10::Device device);

// The training graph placed on `device` (copied, or pinned for zero-copy reads) for the
// tensor sampler when TrainOptions::graph_placement asks, else null (the C++ kernel samples
// on the host).
std::unique_ptr<sampling::TensorNeighborSource> placed_graph(const TrainingInputs& inputs,
                                                             const TrainOptions& options,
                                                             c10::Device device);

// The cache counters of `rows` (rows, lookups, hit rate) added to `counters` and logged on the
// main rank of `group`; nothing without rows or a cache.
void add_device_cache_counters(const features::DeviceRows* rows, const TrainOptions& options,
                               const distributed::ProcessGroup* group,
                               std::map<std::string, double>& counters);

}  // namespace graphloom::train
