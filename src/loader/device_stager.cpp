// DeviceStager (device_stager.h): pinned copies on a side stream, joined by an event.
#include "graphloom/loader/device_stager.h"

#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <spdlog/spdlog.h>

namespace graphloom::loader {

void StagedBatch::wait_for_copies() noexcept {
  if (!copied) return;
  try {
    copied->synchronize();
  } catch (const std::exception& e) {
    // A device error (it surfaces again at the next call on the device): the batch is being
    // dropped, maybe while another exception unwinds, so it is logged, not thrown.
    spdlog::warn("a staged batch's copies failed: {}", e.what());
  }
  copied.reset();
}

StagedBatch& StagedBatch::operator=(StagedBatch&& other) {
  if (this != &other) {
    wait_for_copies();
    host = std::move(other.host);
    device = std::move(other.device);
    copied = std::move(other.copied);
    waited_for = other.waited_for;
  }
  return *this;
}

StagedBatch::~StagedBatch() { wait_for_copies(); }

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
      staged.host,
      // Blocks sampled on the device (--graph-placement device) are there already.
      [](const at::Tensor& t) { return !t.is_cpu() || t.is_pinned() ? t : t.pin_memory(); });
  const c10::StreamGuard on_side_stream(*side_stream_);
  try {
    staged.device = sampling::to_device(pinned, device_, /*non_blocking=*/true);
  } catch (...) {
    side_stream_->synchronize();  // the copies queued before the failure still read the host
    throw;
  }
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
