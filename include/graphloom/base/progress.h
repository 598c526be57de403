// Progress reporting for long work: a live bar with rate and ETA on a terminal, occasional
// plain lines when stderr is not a terminal (logs, CI).
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace graphloom
