// CachedThreadPool: threads are reused across calls, tasks that wait on each other all run, and
// a task's exception reaches its future.
#include "graphloom/base/cached_thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>

namespace graphloom {
namespace {

TEST(CachedThreadPool, ReusesItsThreadForOneTaskAtATime) {
  CachedThreadPool pool;
  std::set<std::thread::id> ran_on;
  for (int i = 0; i < 20; ++i) {
    pool.submit([&ran_on] { ran_on.insert(std::this_thread::get_id()); }).get();
  }
  EXPECT_EQ(ran_on.size(), 1u);
  EXPECT_EQ(pool.num_threads(), 1u);
  EXPECT_EQ(ran_on.count(std::this_thread::get_id()), 0u);
}

// A task that fans out and waits for its subtasks, which in turn wait until all of them run
// at once: with a fixed number of threads this would deadlock.
TEST(CachedThreadPool, TasksThatWaitForEachOtherAllRunConcurrently) {
  CachedThreadPool pool;
  constexpr int kSubtasks = 8;
  std::atomic<int> started{0};
  const auto all_started_within = [&started](std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (started.load() < kSubtasks && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    return started.load() == kSubtasks;
  };
  for (int round = 0; round < 3; ++round) {
    started = 0;
    std::atomic<int> met{0};
    pool.submit([&] {
          std::vector<std::future<void>> subtasks;
          for (int i = 0; i < kSubtasks; ++i) {
            subtasks.push_back(pool.submit([&] {
              ++started;
              if (all_started_within(std::chrono::seconds(10))) ++met;
            }));
          }
          for (auto& subtask : subtasks) subtask.get();
        })
        .get();
    EXPECT_EQ(met.load(), kSubtasks) << "round " << round;
  }
  // The threads of the first round served the later ones.
  EXPECT_EQ(pool.num_threads(), static_cast<std::size_t>(kSubtasks + 1));
}

TEST(CachedThreadPool, TheFutureRethrowsTheTasksException) {
  CachedThreadPool pool;
  std::future<void> failed = pool.submit([] { throw std::runtime_error("server 3 is down"); });
  EXPECT_THROW(
      {
        try {
          failed.get();
        } catch (const std::runtime_error& error) {
          EXPECT_STREQ(error.what(), "server 3 is down");
          throw;
        }
      },
      std::runtime_error);
  pool.submit([] {}).get();  // the thread survived its task's exception
  EXPECT_EQ(pool.num_threads(), 1u);
}

TEST(CachedThreadPool, DestructionRunsWhatWasQueued) {
  std::atomic<int> ran{0};
  {
    CachedThreadPool pool;
    for (int i = 0; i < 5; ++i) {
      pool.submit([&ran] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ++ran;
      });
    }
  }
  EXPECT_EQ(ran.load(), 5);
}

}  // namespace
}  // namespace graphloom
