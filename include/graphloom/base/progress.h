// Progress reporting for long work: a live bar with rate and ETA on a terminal, occasional
// plain lines when stderr is not a terminal (logs, CI); a heartbeat for work that cannot
// report its own progress (a library call such as METIS).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "graphloom/base/timer.h"

namespace graphloom {

class ProgressBar {
 public:
  // `total` steps of `unit` (e.g. "batches"); `what` prefixes every line.
  ProgressBar(std::string what, int64_t total, std::string unit);
  ~ProgressBar();

  // Advances by `steps`; `items` (e.g. seeds) feed the rate shown as "<items>/s".
  void advance(int64_t steps = 1, int64_t items = 0);
  // Extra text shown after the bar (e.g. the running loss).
  void set_status(std::string status) { status_ = std::move(status); }
  void finish();

 private:
  void draw(bool final);

  std::string what_;
  int64_t total_;
  std::string unit_;
  int64_t done_ = 0;
  int64_t items_ = 0;
  std::string status_;
  bool live_;
  bool finished_ = false;
  Timer timer_;
  double last_draw_ = -1;
};

// While alive, logs "<what>: still running (N s)" every `interval_seconds`, so that a long
// opaque call is never silent.
class Heartbeat {
 public:
  explicit Heartbeat(std::string what, double interval_seconds = 30.0);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace graphloom
