// Wall-clock timers for progress output and benchmarks.
#pragma once

#include <chrono>

namespace graphloom {

// Measures elapsed wall time since construction or the last reset().
class Timer {
 public:
  Timer() : start_(Clock::now()) {}
  void reset() { start_ = Clock::now(); }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double milliseconds() const { return seconds() * 1e3; }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

// Adds the lifetime of the scope to `*total_seconds` (per-stage time splits).
class ScopedTimer {
 public:
  explicit ScopedTimer(double* total_seconds) : total_seconds_(total_seconds) {}
  ~ScopedTimer() { *total_seconds_ += timer_.seconds(); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  double* total_seconds_;
  Timer timer_;
};

}  // namespace graphloom
