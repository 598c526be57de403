// One writer thread and a byte-bounded queue; errors travel back to the caller's next call.
#include "background_writer.h"

#include "graphloom/base/npy.h"

namespace graphloom::partition {

BackgroundWriter::BackgroundWriter(int64_t max_pending_bytes)
    : max_pending_bytes_(max_pending_bytes), thread_([this] { run(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundWriter::save(std::filesystem::path path, at::Tensor tensor) {
  const auto bytes = static_cast<int64_t>(tensor.nbytes());
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    return error_ != nullptr || pending_bytes_ == 0 || pending_bytes_ + bytes <= max_pending_bytes_;
  });
  if (error_ != nullptr) std::rethrow_exception(error_);
  pending_bytes_ += bytes;
  queue_.emplace_back(std::move(path), std::move(tensor));
  lock.unlock();
  changed_.notify_all();
}

void BackgroundWriter::finish() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return error_ != nullptr || pending_bytes_ == 0; });
  if (error_ != nullptr) std::rethrow_exception(error_);
}

void BackgroundWriter::run() {
  while (true) {
    std::pair<std::filesystem::path, at::Tensor> job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    const auto bytes = static_cast<int64_t>(job.second.nbytes());
    std::exception_ptr failure;
    try {
      save_npy(job.first, job.second);
    } catch (...) {
      failure = std::current_exception();
    }
    job.second = at::Tensor();  // free the rows before the caller queues more
    {
      std::lock_guard lock(mutex_);
      pending_bytes_ -= bytes;
      if (failure != nullptr && error_ == nullptr) error_ = failure;
    }
    changed_.notify_all();
  }
}

}  // namespace graphloom::partition
