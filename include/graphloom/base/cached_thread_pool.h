// Threads kept for blocking work that fans out per call (RPCs to several servers, chunked pulls).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace graphloom {

// Every submitted task starts at once, on an idle thread or on a new one, so tasks may block on
// each other (a pull that waits for its chunk calls) without deadlock. Threads are never retired:
// the pool grows to the largest number of tasks that ran at the same time and stays there.
//
// Why not a thread per task: each thread's exit returns its stack to the kernel
// (madvise(MADV_DONTNEED)), which flushes the TLB of every core running the process. On a
// virtual machine with shadow page tables that flush makes the process re-fault the pages it
// reads at random, such as the local part's feature rows.
class CachedThreadPool {
 public:
  CachedThreadPool() = default;
  CachedThreadPool(const CachedThreadPool&) = delete;
  CachedThreadPool& operator=(const CachedThreadPool&) = delete;
  // Waits for the running and queued tasks, then joins the threads.
  ~CachedThreadPool();

  // Runs `task` now; the future rethrows what the task threw.
  std::future<void> submit(std::function<void()> task);

  // Threads the pool holds, running or idle.
  std::size_t num_threads() const;

  // The process's pool for RPC fan-out; never destroyed, so that no exit path waits on it.
  static CachedThreadPool& shared();

 private:
  void serve();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  struct Task {
    std::function<void()> work;
    std::promise<void> done;
  };
  std::deque<Task> queue_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;  // threads waiting for a task, or started and about to wait
  bool stopping_ = false;
};

}  // namespace graphloom
