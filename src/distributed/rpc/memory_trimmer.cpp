// MemoryTrimmer: a thread that polls a few times a second and trims the heap when idle.
#include "memory_trimmer.h"

#include "graphloom/base/system.h"

namespace graphloom::distributed {
int64_t MemoryTrimmer::steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

MemoryTrimmer::MemoryTrimmer(int64_t trim_after_bytes, std::chrono::milliseconds idle_after)
    : trim_after_bytes_(trim_after_bytes), idle_after_(idle_after), thread_([this] { run(); }) {}

MemoryTrimmer::~MemoryTrimmer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void MemoryTrimmer::note_allocated(int64_t bytes) {
  allocated_.fetch_add(bytes);
  last_activity_ns_.store(steady_now_ns());
}

void MemoryTrimmer::run() {
  const auto poll = std::max(idle_after_ / 4, std::chrono::milliseconds(10));
  std::unique_lock lock(mutex_);
  // gRPC frees an answer once it is sent, which for a large one to a slow client can be well
  // after the request ended: each trim is followed by kFollowUps more, an idle period apart.
  constexpr int kFollowUps = 3;
  int follow_ups = 0;
  int64_t last_trim_ns = 0;
  while (!wake_.wait_for(lock, poll, [this] { return stopping_; })) {
    if (in_flight_.load() > 0) continue;
    const int64_t now = steady_now_ns();
    const int64_t idle_ns = idle_after_.count() * 1'000'000;
    if (now - last_activity_ns_.load() < idle_ns) continue;
    if (allocated_.load() >= trim_after_bytes_) {
      allocated_.store(0);
      follow_ups = kFollowUps;
    } else if (follow_ups == 0 || now - last_trim_ns < idle_ns) {
      continue;
    } else {
      --follow_ups;
    }
    release_free_heap_memory();
    last_trim_ns = now;
    trims_.fetch_add(1);
  }
}

}  // namespace graphloom::distributed
