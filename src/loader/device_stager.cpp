// DeviceStager (device_stager.h): pinned copies on a side stream, joined by an event.
#include "graphloom/loader/device_stager.h"

#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace graphloom::loader {

StagedBatch::~StagedBatch() {
  if (copied) copied->synchronize();
}

DeviceStager::DeviceStager(c10::Device device) : device_(device) {
  if (device.is_cpu()) return;
  const c10::impl::VirtualGuardImpl guard(device.type());
  side_stream_ = guard.getStreamFromGlobalPool(device, /*isHighPriority=*/false);
}

std::optional<StagedBatch> DeviceStager::stage(std::optional<sampling::MiniBatch> host) const {
  if (!host) return std::nullopt;
  StagedBatch staged(std::move(*host));
  if (!side_stream_) {
    staged.device = staged.host;  // the same tensors
    return staged;
  }
  // Pageable memory would make the copies synchronous: rows the loader did not gather into its
  // pinned buffers (DataLoaderOptions::pin_memory) are copied into pinned memory first.
  const sampling::MiniBatch pinned = sampling::map_tensors(
      staged.host, [](const at::Tensor& t) { return t.is_pinned() ? t : t.pin_memory(); });
  const c10::StreamGuard on_side_stream(*side_stream_);
  staged.device = sampling::to_device(pinned, device_, /*non_blocking=*/true);
  staged.copied = std::make_shared<c10::Event>(device_.type());
  staged.copied->record(*side_stream_);
  return staged;
}

const sampling::MiniBatch& DeviceStager::ready(StagedBatch& staged) const {
  if (!staged.copied || staged.waited_for) return staged.device;
  const c10::impl::VirtualGuardImpl guard(device_.type());
  const c10::Stream compute = guard.getStream(device_);
  staged.copied->block(compute);
  // Allocated on the side stream, used on the compute stream: without this the caching
  // allocator could hand the memory out again while the step still reads it.
  sampling::map_tensors(staged.device, [&compute](const at::Tensor& t) {
    t.record_stream(compute);
    return t;
  });
  staged.waited_for = true;
  return staged.device;
}

}  // namespace graphloom::loader
