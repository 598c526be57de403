// DeviceRows (device_rows.h): the three placements of a feature matrix behind one gather. The
// CUDA-only steps go through base/host_memory.h and the kernel seam in cuda/uva.h, which a
// build without CUDA fills with refusals; on the CPU device no placement reaches them.
#include "graphloom/features/device_rows.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "cuda/uva.h"
#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/base/host_memory.h"

namespace graphloom::features {

FeaturePlacement choose_feature_placement(int64_t table_bytes, int64_t free_device_bytes,
                                          c10::Device device) {
  if (device.is_cpu()) return FeaturePlacement::kCpu;
  return table_bytes <= free_device_bytes / 2 ? FeaturePlacement::kDevice
                                              : FeaturePlacement::kPinned;
}

DeviceRows::DeviceRows(at::Tensor table, c10::Device device, FeaturePlacement placement)
    : DeviceRows(EncodedRows{.values = std::move(table)}, device, placement) {
  decodes_ = false;  // rows as they are, 16-bit ones too
}

DeviceRows::DeviceRows(EncodedRows table, c10::Device device, FeaturePlacement placement)
    : host_table_(std::move(table.values)), device_(device), placement_(placement) {
  require_device(device);
  GL_CHECK(host_table_.defined() && host_table_.dim() >= 1 && host_table_.is_cpu(),
           "DeviceRows needs a host matrix of at least one dimension");
  host_table_ = host_table_.contiguous();
  decodes_ = decodes_to_float(host_table_.scalar_type(), table.row_scale.defined());
  if (table.row_scale.defined()) {
    GL_CHECK(host_table_.dim() == 2 && table.row_scale.numel() == host_table_.size(0),
             "DeviceRows: a row scale needs a [rows, dim] table and one scale per row ({} for {} "
             "rows)",
             table.row_scale.numel(), host_table_.size(0));
    row_scale_ = table.row_scale.to(at::kFloat).to(device);
  }
  if (placement_ == FeaturePlacement::kAuto) {
    const int64_t bytes = host_table_.numel() * host_table_.element_size();
    placement_ = choose_feature_placement(
        bytes, device.is_cpu() ? 0 : graphloom::free_device_bytes(device), device);
  }
  if (device.is_cpu()) return;  // every placement is the plain gather
  if (placement_ == FeaturePlacement::kDevice) {
    device_table_ = host_table_.to(device);
  } else if (placement_ == FeaturePlacement::kPinned) {
    device_table_ = host_memory_on_device(host_table_, device, "feature_placement");
  }
}

namespace {

void check_row_ids(const at::Tensor& ids, int64_t num_rows, const char* what) {
  GL_CHECK(ids.scalar_type() == at::kLong && ids.dim() == 1,
           "{} must be a 1-D int64 tensor, got {} with {} dims", what,
           c10::toString(ids.scalar_type()), ids.dim());
  if (ids.numel() == 0) return;
  const int64_t low = ids.min().item<int64_t>();
  const int64_t high = ids.max().item<int64_t>();
  GL_CHECK_AS(RangeError, low >= 0 && high < num_rows, "{}: row id {} is outside [0, {})", what,
              low < 0 ? low : high, num_rows);
}

// The shape of `rows` rows of `table`.
std::vector<int64_t> rows_shape(const at::Tensor& table, int64_t rows) {
  std::vector<int64_t> shape = table.sizes().vec();
  shape[0] = rows;
  return shape;
}

}  // namespace

void DeviceRows::cache_rows(const at::Tensor& hot_rows) {
  check_row_ids(hot_rows, num_rows(), "cached rows");
  const at::Tensor rows = hot_rows.to(device_);
  at::Tensor slots = at::full({num_rows()}, -1, at::TensorOptions(device_).dtype(at::kInt));
  slots.index_put_({rows}, at::arange(rows.numel(), slots.options()));
  GL_CHECK((slots >= 0).sum().item<int64_t>() == rows.numel(),
           "cached rows: {} ids name fewer distinct rows", rows.numel());
  cache_ = host_table_.index_select(0, hot_rows.cpu()).to(device_);
  slot_of_row_ = slots;
  lookups_ = 0;
  hits_ = 0;
}

at::Tensor DeviceRows::gather(const at::Tensor& ids) const {
  check_row_ids(ids, num_rows(), "row ids");
  return decoded(gather_stored(ids), ids);
}

at::Tensor DeviceRows::decoded(at::Tensor rows, const at::Tensor& ids) const {
  if (!decodes_) return rows;
  rows = rows.to(at::kFloat);
  if (row_scale_.defined()) rows.mul_(row_scale_.index_select(0, ids.to(device_)).unsqueeze(1));
  return rows;
}

// The rows as stored: the cache's, the rest by the placement.
at::Tensor DeviceRows::gather_stored(const at::Tensor& ids) const {
  if (!cache_.defined()) return gather_by_placement(ids);
  const at::Tensor on_device = ids.to(device_);
  const at::Tensor slot = slot_of_row_.index_select(0, on_device).to(at::kLong);
  const at::Tensor hit = slot >= 0;
  const at::Tensor hit_at = hit.nonzero().squeeze(1);
  const at::Tensor miss_at = hit.logical_not().nonzero().squeeze(1);
  lookups_ += ids.numel();
  hits_ += hit_at.numel();
  at::Tensor out =
      at::empty(rows_shape(host_table_, ids.numel()), host_table_.options().device(device_));
  out.index_copy_(0, hit_at, cache_.index_select(0, slot.index_select(0, hit_at)));
  if (miss_at.numel() > 0) {
    out.index_copy_(0, miss_at, gather_by_placement(on_device.index_select(0, miss_at)));
  }
  return out;
}

at::Tensor DeviceRows::gather_by_placement(const at::Tensor& ids) const {
  if (device_.is_cpu()) return host_table_.index_select(0, ids.cpu());
  switch (placement_) {
    case FeaturePlacement::kDevice:
      return device_table_.index_select(0, ids.to(device_));
    case FeaturePlacement::kPinned:
      return cuda::gather_mapped_rows(device_table_, ids.to(device_), device_);
    default: {
      // Gathered on the CPU into pinned memory, so that the copy can overlap compute.
      at::Tensor staged = at::empty(rows_shape(host_table_, ids.numel()),
                                    host_table_.options().pinned_memory(true));
      at::index_select_out(staged, host_table_, 0, ids.cpu());
      return staged.to(device_, /*non_blocking=*/true);
    }
  }
}

}  // namespace graphloom::features
