// Which cached row to evict (internal to the features module). A cache shard holds rows in
// `capacity` slots; its policy sees every hit and insertion by slot and names the victim when a
// new row needs a slot. One interface, four policies (the ones GraphBolt's feature cache offers):
//   SIEVE    (Zhang et al., NSDI'24): a FIFO queue and a visited bit; a hand moves from the
//            oldest entry towards the newest, sparing (and clearing) visited ones, which stay
//            in place. New entries go to the head, so one-hit rows leave quickly.
//   S3-FIFO  (Yang et al., SOSP'23): a small FIFO (10% of the slots) that new rows enter, a main
//            FIFO for rows hit while in the small one, and a ghost FIFO of rows evicted from the
//            small one, which re-enter main directly. Frequencies of 0-3 grant reinsertion.
//   LRU      the least recently used row.
//   CLOCK    FIFO with reinsertion: the hand spares a visited entry by clearing its bit and
//            moving on, as if it were re-queued at the head.
// Not thread-safe: the shard's lock guards every call.
#pragma once

#include <cstdint>
#include <memory>

#include "graphloom/features/cached_feature_source.h"

namespace graphloom::features {

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // `row` now lives in `slot` (a free slot, or the last victim's).
  virtual void inserted(int32_t slot, int64_t row) = 0;
  virtual void hit(int32_t slot) = 0;
  // The slot to free for a new row when every slot is taken; it leaves the policy's queues.
  virtual int32_t evict() = 0;
};

// The policy `policy` over `capacity` slots; kSieve, kS3Fifo, kLru or kClock.
std::unique_ptr<EvictionPolicy> make_eviction_policy(CachePolicy policy, int32_t capacity);

}  // namespace graphloom::features
