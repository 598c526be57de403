// fan_out: results in index order, the lowest failing index rethrown only after every started
// call has ended, the inline index on the calling thread, and the bound on calls in flight.
#include "graphloom/base/fan_out.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace graphloom {
namespace {

TEST(FanOut, ResultsInIndexOrderAndEmptySlotsForMissingIndices) {
  const auto slots = fan_out<int64_t>(6, {5, 1, 3}, 8, [](int64_t k) { return k * 10; });
  ASSERT_EQ(slots.size(), 6u);
  EXPECT_FALSE(slots[0] || slots[2] || slots[4]);
  EXPECT_EQ(*slots[1], 10);
  EXPECT_EQ(*slots[3], 30);
  EXPECT_EQ(*slots[5], 50);
}

TEST(FanOut, BoolResultsFromManyThreads) {
  // vector<bool> packs bits: concurrent writes to one would race (TSan's finding).
  const auto slots = fan_out<bool>(
      64,
      [] {
        std::vector<int64_t> all(64);
        for (int64_t k = 0; k < 64; ++k) all[k] = k;
        return all;
      }(),
      64, [](int64_t k) { return k % 2 == 0; });
  for (int64_t k = 0; k < 64; ++k) EXPECT_EQ(*slots[k], k % 2 == 0) << k;
}

TEST(FanOut, InlineIndexRunsOnTheCallingThread) {
  const auto caller = std::this_thread::get_id();
  const auto slots = fan_out<bool>(
      3, {0, 1, 2}, 3, [&](int64_t) { return std::this_thread::get_id() == caller; },
      /*inline_index=*/1);
  EXPECT_TRUE(*slots[1]);
  EXPECT_FALSE(*slots[0]);
  EXPECT_FALSE(*slots[2]);
}

TEST(FanOut, AtMostMaxInFlightCallsAtOnce) {
  std::atomic<int> running{0}, most{0};
  std::vector<int64_t> indices(12);
  for (int64_t k = 0; k < 12; ++k) indices[k] = k;
  fan_out<int>(12, indices, 3, [&](int64_t) {
    const int now = ++running;
    for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --running;
    return 0;
  });
  EXPECT_LE(most.load(), 3);
  EXPECT_GE(most.load(), 2);  // they did overlap
}

TEST(FanOut, RethrowsTheLowestFailureAfterEveryStartedCallEnded) {
  std::atomic<int> finished{0};
  try {
    fan_out<int>(3, {0, 1, 2}, 3, [&](int64_t k) -> int {
      if (k == 2) throw std::runtime_error("part 2 failed");
      if (k == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ++finished;
        throw std::runtime_error("part 1 failed");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ++finished;
      return 0;
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "part 1 failed");
  }
  EXPECT_EQ(finished.load(), 2);  // the slow calls had ended before the rethrow
}

TEST(FanOut, NoNewCallStartsAfterAFailure) {
  std::atomic<int> started{0};
  std::vector<int64_t> indices(100);
  for (int64_t k = 0; k < 100; ++k) indices[k] = k;
  EXPECT_THROW(fan_out<int>(100, indices, 1,
                            [&](int64_t k) -> int {
                              ++started;
                              if (k == 3) throw std::runtime_error("chunk 3");
                              return 0;
                            }),
               std::runtime_error);
  EXPECT_EQ(started.load(), 4);
}

}  // namespace
}  // namespace graphloom
