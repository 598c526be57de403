// Aligned buffers that the disk source reads into, kept between gathers. A buffer fresh from
// the allocator is mapped anew (tens of MB per batch, above malloc's mmap threshold), and the
// kernel faults in and zeroes it page by page while it pins it for each O_DIRECT read: a
// quarter of the CPU time of an epoch from disk (perf) before the buffers were kept.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "graphloom/base/error.h"

namespace graphloom::features {

class ReadBuffers {
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  struct Buffer {
    std::unique_ptr<std::byte, Free> memory;
    int64_t bytes = 0;
  };

 public:
  // `alignment`: of every buffer (a power of two; O_DIRECT's block). `kept`: the most buffers
  // held between gathers (one per concurrent gather is enough to allocate nothing in steady
  // state); a buffer returned beyond it is freed, the smallest first. A kept buffer more than
  // kOutsized times a request is freed by that request: it came from an outsized gather (a
  // cache fill, an evaluation pass) and would otherwise stay for the source's lifetime.
  ReadBuffers(int64_t alignment, std::size_t kept) : alignment_(alignment), kept_(kept) {
    free_.reserve(kept + 1);  // giving back allocates nothing (it runs in destructors)
  }

  // A buffer of at least `bytes`, returned to the pool when the lease ends.
  class Lease {
   public:
    Lease(ReadBuffers& pool, Buffer buffer) : pool_(pool), buffer_(std::move(buffer)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (!discarded_) pool_.give_back(std::move(buffer_));
    }
    std::byte* data() const { return buffer_.memory.get(); }
    int64_t bytes() const { return buffer_.bytes; }
    // Frees the buffer at the end of the lease instead of keeping it: after a failed read,
    // whose reads may still land in it.
    void discard() { discarded_ = true; }

   private:
    ReadBuffers& pool_;
    Buffer buffer_;
    bool discarded_ = false;
  };

  Lease take(int64_t bytes) {
    std::vector<Buffer> outsized;  // freed after the lock is released
    {
      const std::lock_guard lock(mutex_);
      for (auto it = free_.begin(); it != free_.end();) {
        if (it->bytes / kOutsized > std::max<int64_t>(bytes, alignment_)) {
          outsized.push_back(std::move(*it));
          it = free_.erase(it);
        } else {
          ++it;
        }
      }
      // The smallest kept buffer that is large enough.
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->bytes >= bytes && (best == free_.end() || it->bytes < best->bytes)) best = it;
      }
      if (best != free_.end()) {
        Buffer found = std::move(*best);
        free_.erase(best);
        return Lease(*this, std::move(found));
      }
    }
    // A quarter more than asked, so that slightly bigger batches reuse it.
    const int64_t rounded =
        (std::max<int64_t>(bytes, 1) * 5 / 4 + alignment_ - 1) / alignment_ * alignment_;
    Buffer fresh{std::unique_ptr<std::byte, Free>(static_cast<std::byte*>(
                     std::aligned_alloc(alignment_, static_cast<std::size_t>(rounded)))),
                 rounded};
    GL_CHECK(fresh.memory != nullptr, "cannot allocate {} bytes to read feature rows into",
             rounded);
    return Lease(*this, std::move(fresh));
  }

  // Buffers held between gathers.
  std::size_t kept() const {
    const std::lock_guard lock(mutex_);
    return free_.size();
  }

 private:
  void give_back(Buffer buffer) {
    Buffer dropped;  // freed after the lock is released
    {
      const std::lock_guard lock(mutex_);
      free_.push_back(std::move(buffer));
      if (free_.size() > kept_) {
        const auto smallest =
            std::min_element(free_.begin(), free_.end(),
                             [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
        dropped = std::move(*smallest);
        free_.erase(smallest);
      }
    }
  }

  static constexpr int64_t kOutsized = 4;
  const int64_t alignment_;
  const std::size_t kept_;
  mutable std::mutex mutex_;
  std::vector<Buffer> free_;
};

}  // namespace graphloom::features
