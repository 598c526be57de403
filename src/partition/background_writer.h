// BackgroundWriter: saves .npy files on one background thread, so that the kernel's copy of
// each file into the page cache (a quarter of `partition --method random` on the reference
// graph) overlaps with computing the next part's arrays. Queued tensors stay alive until
// written, so the queue holds at most `max_pending_bytes` (one more tensor may wait when it
// alone is bigger).
#pragma once

#include <ATen/core/Tensor.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>

namespace graphloom::partition {

class BackgroundWriter {
 public:
  explicit BackgroundWriter(int64_t max_pending_bytes);
  // Stops after the file being written; files still queued are dropped (the caller is
  // unwinding and its staging directory goes with it).
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Queues `tensor` for `path`, waiting while the queue is full. Rethrows an earlier write's
  // error.
  void save(std::filesystem::path path, at::Tensor tensor);
  // Waits until every queued file is written; rethrows the first write error.
  void finish();

 private:
  void run();

  const int64_t max_pending_bytes_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<std::filesystem::path, at::Tensor>> queue_;
  int64_t pending_bytes_ = 0;  // queued plus the file being written
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace graphloom::partition
