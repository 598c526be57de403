// CachedThreadPool: a queue served by threads that wait for the next task instead of exiting.
#include "graphloom/base/cached_thread_pool.h"

#include <exception>

namespace graphloom {

CachedThreadPool::~CachedThreadPool() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

std::future<void> CachedThreadPool::submit(std::function<void()> task) {
  Task queued{std::move(task), {}};
  std::future<void> done = queued.done.get_future();
  const std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(queued));
  // Each queued task has its own idle thread; a new one counts as idle from its creation.
  if (queue_.size() > idle_) {
    ++idle_;
    threads_.emplace_back([this] { serve(); });
  } else {
    wake_.notify_one();
  }
  return done;
}

std::size_t CachedThreadPool::num_threads() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return threads_.size();
}

CachedThreadPool& CachedThreadPool::shared() {
  static auto* pool = new CachedThreadPool();
  return *pool;
}

void CachedThreadPool::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left to run
    Task task = std::move(queue_.front());
    queue_.pop_front();
    --idle_;
    lock.unlock();
    std::exception_ptr failure;
    try {
      task.work();
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    // Idle again before the caller learns that the task is done: its next submit reuses this
    // thread rather than starting another.
    ++idle_;
    if (failure) {
      task.done.set_exception(failure);
    } else {
      task.done.set_value();
    }
  }
}

}  // namespace graphloom
