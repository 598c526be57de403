// DeviceRows: a host feature matrix read onto a device, by one of three placements (GraphBolt's
// pinned/UVA features, DGL's `graph.to(device)`), all behind one gather call.
//
//   cpu     gather on the CPU into a pinned staging buffer, then a non-blocking copy;
//   pinned  the matrix's own host memory (process memory, a partition's shared memory or an
//           mmap) is registered as pinned (cudaHostRegister) and a CUDA kernel reads the rows
//           straight into device memory by zero-copy (UVA): no CPU gather;
//   device  the whole matrix is copied to the device once.
//
// On the CPU device every placement is a plain gather: pinned memory is plain memory there, so
// the same calls run (and are tested) on a machine without a GPU.
//
// Encoded tables (row_codec.h: 16-bit floats, int8 with a row scale) stay encoded on the way:
// the device holds, caches and receives the stored bytes (half or a quarter of float32's) and
// decodes the gathered rows itself, to the same float32 values a host gather decodes.
//
// A cache of hot rows (cache_rows, e.g. the highest in-degree nodes: DGL's and GraphBolt's GPU
// feature cache) keeps a copy of those rows in device memory; gather() then reads them there
// and only the others by the placement, and counts its hits.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>
#include <utility>

#include "graphloom/base/enum_names.h"
#include "graphloom/features/row_codec.h"

namespace graphloom::features {

enum class FeaturePlacement { kAuto, kCpu, kPinned, kDevice };

// What kAuto means for a matrix of `table_bytes` on a device with `free_device_bytes` free: the
// whole matrix on the device when it takes at most half the free memory (the rest is for the
// model and the batches), else pinned. On the CPU device: cpu.
FeaturePlacement choose_feature_placement(int64_t table_bytes, int64_t free_device_bytes,
                                          c10::Device device);

class DeviceRows {
 public:
  // `table`: [num_rows, ...] in host memory, contiguous; kept alive (and, when pinned,
  // registered) for the lifetime of this object. Throws OptionError("feature_placement") for a
  // placement this build or device cannot give, and OptionError("device") for a device it
  // cannot use.
  DeviceRows(at::Tensor table, c10::Device device, FeaturePlacement placement);
  // An encoded table: gathers return its rows decoded to float32 (row_codec.h) on the device.
  DeviceRows(EncodedRows table, c10::Device device, FeaturePlacement placement);
  DeviceRows(const DeviceRows&) = delete;
  DeviceRows& operator=(const DeviceRows&) = delete;

  // Rows `ids` (int64, on any device) as a tensor on device(). Throws RangeError naming the
  // first id outside [0, num_rows).
  at::Tensor gather(const at::Tensor& ids) const;

  // Keeps rows `hot_rows` (distinct int64 ids) in device memory too, replacing any earlier
  // cache. Throws RangeError for an id outside the matrix and graphloom::Error for a repeat.
  void cache_rows(const at::Tensor& hot_rows);
  int64_t cached_rows() const { return cache_.defined() ? cache_.size(0) : 0; }
  // Rows asked for, and found in the cache, since the cache was made.
  int64_t cache_lookups() const { return lookups_; }
  int64_t cache_hits() const { return hits_; }

  c10::Device device() const { return device_; }
  FeaturePlacement placement() const { return placement_; }
  int64_t num_rows() const { return host_table_.size(0); }

 private:
  at::Tensor gather_stored(const at::Tensor& ids) const;
  at::Tensor gather_by_placement(const at::Tensor& ids) const;
  // Stored rows of `ids` as gathered, decoded on the device when the table is encoded.
  at::Tensor decoded(at::Tensor rows, const at::Tensor& ids) const;

  at::Tensor host_table_;
  // kDevice: the matrix copied to the device; kPinned: host_table_'s memory as a device tensor.
  at::Tensor device_table_;
  bool decodes_ = false;    // rows are decoded to float32 after the gather
  at::Tensor row_scale_;    // float32 [num_rows] on the device, or undefined (scale 1)
  at::Tensor cache_;        // the hot rows, on the device
  at::Tensor slot_of_row_;  // int32 [num_rows] on the device: row -> its slot in cache_, or -1
  mutable std::atomic<int64_t> lookups_{0};
  mutable std::atomic<int64_t> hits_{0};
  c10::Device device_;
  FeaturePlacement placement_;
};

}  // namespace graphloom::features

namespace graphloom {

template <>
struct EnumNames<features::FeaturePlacement> {
  static constexpr std::array<std::pair<std::string_view, features::FeaturePlacement>, 4> kNames{
      {{"auto", features::FeaturePlacement::kAuto},
       {"cpu", features::FeaturePlacement::kCpu},
       {"pinned", features::FeaturePlacement::kPinned},
       {"device", features::FeaturePlacement::kDevice}}};
};

}  // namespace graphloom
