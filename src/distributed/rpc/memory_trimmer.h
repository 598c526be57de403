// Gives a server's freed heap pages back to the kernel once it is idle (internal to the rpc
// module). keep_freed_heap_pages() keeps freed blocks for reuse while requests stream in, so
// that a steady training load pays no page faults; after a burst of large requests those pages
// would stay resident for good. The trimmer returns them when no request has run for
// `idle_after` and requests made the server use at least `trim_after_bytes` since the last
// trim; a few follow-up trims, an idle period apart, catch answers that gRPC frees late.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace graphloom::distributed {

class MemoryTrimmer {
 public:
  MemoryTrimmer(int64_t trim_after_bytes, std::chrono::milliseconds idle_after);
  ~MemoryTrimmer();
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  // Marks a request as being handled for its lifetime: the trimmer waits for none.
  class Request {
   public:
    explicit Request(MemoryTrimmer& trimmer) : trimmer_(trimmer) { trimmer_.in_flight_ += 1; }
    ~Request() {
      trimmer_.in_flight_ -= 1;
      trimmer_.last_activity_ns_.store(steady_now_ns());
    }
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

   private:
    MemoryTrimmer& trimmer_;
  };
  // A request made the server use `bytes` (its decoded copy, its answer).
  void note_allocated(int64_t bytes);
  // Trims run so far (for tests).
  int64_t trims() const { return trims_.load(); }

 private:
  static int64_t steady_now_ns();
  void run();

  const int64_t trim_after_bytes_;
  const std::chrono::milliseconds idle_after_;
  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> allocated_{0};
  std::atomic<int64_t> last_activity_ns_{0};
  std::atomic<int64_t> trims_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace graphloom::distributed
