// The four eviction policies over one slot queue (eviction_policy.h).
#include "eviction_policy.h"

#include <algorithm>
#include <list>
#include <unordered_map>
#include <vector>

#include "graphloom/base/error.h"

namespace graphloom::features {
namespace {

// A doubly linked queue of slots: head = newest, tail = oldest; O(1) push and unlink.
class SlotQueue {
 public:
  explicit SlotQueue(int32_t capacity) : newer_(capacity, -1), older_(capacity, -1) {}

  int32_t tail() const { return tail_; }
  int32_t size() const { return size_; }
  int32_t newer(int32_t slot) const { return newer_[slot]; }

  void push_head(int32_t slot) {
    newer_[slot] = -1;
    older_[slot] = head_;
    if (head_ >= 0) newer_[head_] = slot;
    head_ = slot;
    if (tail_ < 0) tail_ = slot;
    ++size_;
  }

  void unlink(int32_t slot) {
    if (newer_[slot] >= 0) {
      older_[newer_[slot]] = older_[slot];
    } else {
      head_ = older_[slot];
    }
    if (older_[slot] >= 0) {
      newer_[older_[slot]] = newer_[slot];
    } else {
      tail_ = newer_[slot];
    }
    --size_;
  }

 private:
  std::vector<int32_t> newer_, older_;
  int32_t head_ = -1, tail_ = -1, size_ = 0;
};

// A FIFO queue of slots with a visited bit each: new entries enter unvisited at the head, a
// hit sets the bit. SIEVE and CLOCK differ only in how they evict.
class VisitedFifo : public EvictionPolicy {
 public:
  explicit VisitedFifo(int32_t capacity) : queue_(capacity), visited_(capacity, 0) {}
  void inserted(int32_t slot, int64_t) override {
    visited_[slot] = 0;
    queue_.push_head(slot);
  }
  void hit(int32_t slot) override { visited_[slot] = 1; }

 protected:
  SlotQueue queue_;
  std::vector<uint8_t> visited_;
};

class Sieve final : public VisitedFifo {
 public:
  using VisitedFifo::VisitedFifo;
  int32_t evict() override {
    int32_t victim = hand_ >= 0 ? hand_ : queue_.tail();
    while (visited_[victim]) {
      visited_[victim] = 0;
      victim = queue_.newer(victim) >= 0 ? queue_.newer(victim) : queue_.tail();
    }
    hand_ = queue_.newer(victim);
    queue_.unlink(victim);
    return victim;
  }

 private:
  int32_t hand_ = -1;  // the next entry to examine; -1: start from the tail
};

class Lru final : public EvictionPolicy {
 public:
  explicit Lru(int32_t capacity) : queue_(capacity) {}
  void inserted(int32_t slot, int64_t) override { queue_.push_head(slot); }
  void hit(int32_t slot) override {
    queue_.unlink(slot);
    queue_.push_head(slot);
  }
  int32_t evict() override {
    const int32_t victim = queue_.tail();
    queue_.unlink(victim);
    return victim;
  }

 private:
  SlotQueue queue_;
};

class Clock final : public VisitedFifo {
 public:
  using VisitedFifo::VisitedFifo;
  int32_t evict() override {
    for (;;) {
      const int32_t oldest = queue_.tail();
      queue_.unlink(oldest);
      if (!visited_[oldest]) return oldest;
      visited_[oldest] = 0;  // spared: back to the head
      queue_.push_head(oldest);
    }
  }
};

class S3Fifo final : public EvictionPolicy {
 public:
  explicit S3Fifo(int32_t capacity)
      : small_(capacity),
        main_(capacity),
        small_capacity_(std::max(1, capacity / 10)),
        ghost_capacity_(std::max(1, capacity - std::max(1, capacity / 10))),
        frequency_(capacity, 0),
        row_of_slot_(capacity, -1) {}

  void inserted(int32_t slot, int64_t row) override {
    frequency_[slot] = 0;
    row_of_slot_[slot] = row;
    const auto ghost = ghost_index_.find(row);
    if (ghost == ghost_index_.end()) {
      small_.push_head(slot);
      return;
    }
    ghost_.erase(ghost->second);  // seen again soon after leaving: straight to main
    ghost_index_.erase(ghost);
    main_.push_head(slot);
  }
  void hit(int32_t slot) override { frequency_[slot] = std::min<uint8_t>(frequency_[slot] + 1, 3); }
  int32_t evict() override {
    for (;;) {
      if (small_.size() >= small_capacity_ || main_.size() == 0) {
        const int32_t oldest = small_.tail();
        small_.unlink(oldest);
        if (frequency_[oldest] == 0) {
          remember(row_of_slot_[oldest]);
          return oldest;
        }
        frequency_[oldest] = 0;  // hit while small: promoted to main
        main_.push_head(oldest);
        continue;
      }
      const int32_t oldest = main_.tail();
      main_.unlink(oldest);
      if (frequency_[oldest] == 0) return oldest;
      --frequency_[oldest];
      main_.push_head(oldest);
    }
  }

 private:
  void remember(int64_t row) {
    ghost_.push_front(row);
    ghost_index_[row] = ghost_.begin();
    if (static_cast<int32_t>(ghost_.size()) > ghost_capacity_) {
      ghost_index_.erase(ghost_.back());
      ghost_.pop_back();
    }
  }

  SlotQueue small_, main_;
  int32_t small_capacity_, ghost_capacity_;
  std::vector<uint8_t> frequency_;
  std::vector<int64_t> row_of_slot_;
  std::list<int64_t> ghost_;  // rows evicted from small, newest first
  std::unordered_map<int64_t, std::list<int64_t>::iterator> ghost_index_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_eviction_policy(CachePolicy policy, int32_t capacity) {
  switch (policy) {
    case CachePolicy::kSieve:
      return std::make_unique<Sieve>(capacity);
    case CachePolicy::kS3Fifo:
      return std::make_unique<S3Fifo>(capacity);
    case CachePolicy::kLru:
      return std::make_unique<Lru>(capacity);
    case CachePolicy::kClock:
      return std::make_unique<Clock>(capacity);
    default:
      GL_THROW("cache policy {} does not evict", static_cast<int>(policy));
  }
}

}  // namespace graphloom::features
