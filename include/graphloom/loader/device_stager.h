// DeviceStager: the loader's batches onto the training device one step ahead. Each batch is
// copied into pinned host memory and sent by non-blocking copies on a side stream, with an
// event recorded there; when its step comes, the compute stream waits for that event (not the
// host), so the copy of batch i+1 overlaps the compute of batch i. On the CPU a batch is used
// as it is. Device-generic (c10 streams and events): no CUDA header, one code path.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>

#include <memory>
#include <optional>

#include "graphloom/sampling/block.h"

namespace graphloom::loader {

// A batch on its way to the device: the loader's host batch (host ids read by placed rows and
// embeddings) and its device copy, usable once DeviceStager::ready() says so.
struct StagedBatch {
  StagedBatch() = default;
  explicit StagedBatch(sampling::MiniBatch from_loader) : host(std::move(from_loader)) {}
  StagedBatch(StagedBatch&&) = default;
  StagedBatch& operator=(StagedBatch&& other);  // waits for this batch's copies first
  // Waits for the copies (long done once the step that used it has been read): the host rows
  // may sit in the loader's pooled pinned buffers, which must not be refilled under a copy.
  ~StagedBatch();

  sampling::MiniBatch host;
  sampling::MiniBatch device;
  std::shared_ptr<c10::Event> copied;  // recorded on the side stream after the copies
  bool waited_for = false;             // the compute stream waits for `copied`

 private:
  void wait_for_copies() noexcept;
};

class DeviceStager {
 public:
  explicit DeviceStager(c10::Device device);

  // Starts moving `host` (a loader batch, or nullopt at the end of the epoch: passed on).
  std::optional<StagedBatch> stage(std::optional<sampling::MiniBatch> host) const;
  // `staged.device`, safe to use on the device's current stream: that stream waits for the
  // copies, and the device memory is kept until the work queued on it is done.
  const sampling::MiniBatch& ready(StagedBatch& staged) const;

  c10::Device device() const { return device_; }

 private:
  c10::Device device_;
  std::optional<c10::Stream> side_stream_;  // none on the CPU
};

}  // namespace graphloom::loader
