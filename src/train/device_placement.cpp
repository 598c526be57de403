// Device placement shared by the training tasks: autocast, placed feature rows, placed graph.
#include "device_placement.h"

#include <ATen/autocast_mode.h>
#include <spdlog/spdlog.h>

#include "graphloom/base/error.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/train/gradient_sync.h"
#include "graphloom/train/trainer.h"

namespace graphloom::train {
namespace {

// The rows of `table` that fit in `bytes`, the nodes that most edges leave first: those that
// sampling reaches most often.
at::Tensor hottest_rows(const TrainingInputs& inputs, int64_t bytes, const at::Tensor& table) {
  at::Tensor degrees = inputs.out_degrees;
  if (!degrees.defined()) {
    const auto* local = dynamic_cast<const sampling::LocalNeighborSource*>(inputs.graph);
    GL_CHECK(local != nullptr, "a device cache needs the graph's degrees");
    degrees = local->graph().out_degrees();
  }
  const int64_t row_bytes = table.numel() / std::max<int64_t>(table.size(0), 1) *
                            static_cast<int64_t>(table.element_size());
  const int64_t rows = std::min<int64_t>(table.size(0), bytes / std::max<int64_t>(row_bytes, 1));
  return std::get<1>(degrees.topk(rows)).contiguous();
}

}  // namespace

AutocastScope::AutocastScope(Precision precision, c10::Device device)
    : enabled_(precision != Precision::kFp32), device_type_(device.type()) {
  if (!enabled_) return;
  at::autocast::set_autocast_dtype(device_type_,
                                   precision == Precision::kBf16 ? at::kBFloat16 : at::kHalf);
  at::autocast::set_autocast_enabled(device_type_, true);
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  at::autocast::set_autocast_enabled(device_type_, false);
  at::autocast::clear_cache();
}

std::unique_ptr<features::DeviceRows> placed_rows(const TrainingInputs& inputs,
                                                  const TrainOptions& options, c10::Device device) {
  using features::FeaturePlacement;
  FeaturePlacement placement = options.feature_placement;
  const bool cache = options.device_cache_bytes > 0;
  if (placement == FeaturePlacement::kAuto && device.is_cpu()) placement = FeaturePlacement::kCpu;
  if (inputs.embedding != nullptr || inputs.rows == nullptr ||
      (placement == FeaturePlacement::kCpu && !cache)) {
    return nullptr;
  }
  // Encoded rows (16-bit, int8, row-normalized) go as stored and are decoded on the device.
  features::EncodedRows table = inputs.rows->encoded_table("feat");
  if (!table.values.defined()) {
    if (placement == FeaturePlacement::kAuto && !cache) return nullptr;
    throw OptionError(cache ? "device_cache_bytes" : "feature_placement",
                      fmt::format("{} needs the 'feat' matrix in this process's memory (a local "
                                  "dataset, not read from disk; not remote rows)",
                                  cache ? "a device cache" : std::string(name_of(placement))));
  }
  const at::Tensor values = table.values;
  auto rows = std::make_unique<features::DeviceRows>(std::move(table), device, placement);
  if (cache) rows->cache_rows(hottest_rows(inputs, options.device_cache_bytes, values));
  return rows;
}

std::unique_ptr<sampling::TensorNeighborSource> placed_graph(const TrainingInputs& inputs,
                                                             const TrainOptions& options,
                                                             c10::Device device) {
  if (options.graph_placement == GraphPlacement::kCpu) return nullptr;
  const auto* local = dynamic_cast<const sampling::LocalNeighborSource*>(inputs.graph);
  if (local == nullptr) {
    throw OptionError("graph_placement",
                      fmt::format("{} needs the whole training graph in this process (a local "
                                  "dataset, not a partition's servers)",
                                  name_of(options.graph_placement)));
  }
  return std::make_unique<sampling::TensorNeighborSource>(
      local->graph(), device,
      options.graph_placement == GraphPlacement::kPinned ? sampling::CscPlacement::kPinned
                                                         : sampling::CscPlacement::kDevice);
}

void add_device_cache_counters(const features::DeviceRows* rows, const TrainOptions& options,
                               const distributed::ProcessGroup* group,
                               std::map<std::string, double>& counters) {
  if (rows == nullptr || rows->cached_rows() == 0) return;
  const auto lookups = static_cast<double>(rows->cache_lookups());
  const double hit_rate = lookups > 0 ? rows->cache_hits() / lookups : 0.0;
  counters["device_cache_rows"] = static_cast<double>(rows->cached_rows());
  counters["device_cache_lookups"] = lookups;
  counters["device_cache_hit_rate"] = hit_rate;
  if (!data_parallel(group) || group->rank() == 0) {
    spdlog::info("device feature cache on {}: {} of {} rows, hit rate {:.1f}% of {:.0f} lookups",
                 training_device(options, group).str(), rows->cached_rows(), rows->num_rows(),
                 100 * hit_rate, lookups);
  }
}

}  // namespace graphloom::train
