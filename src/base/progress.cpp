// Progress bar: redraws at most 10 times a second on a TTY; plain lines every 10 s otherwise.
// Heartbeat: one thread that waits on a condition variable, so it ends at once when done.
#include "graphloom/base/progress.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>

#include <cstdio>

namespace graphloom {

ProgressBar::ProgressBar(std::string what, int64_t total, std::string unit)
    : what_(std::move(what)),
      total_(total),
      unit_(std::move(unit)),
      live_(::isatty(STDERR_FILENO)) {}

ProgressBar::~ProgressBar() {
  if (!finished_ && live_ && last_draw_ >= 0) std::fputs("\n", stderr);
}

void ProgressBar::advance(int64_t steps, int64_t items) {
  done_ += steps;
  items_ += items;
  const double now = timer_.seconds();
  const double interval = live_ ? 0.1 : 10.0;
  if (now - last_draw_ >= interval) {
    draw(false);
    last_draw_ = now;
  }
}

void ProgressBar::finish() {
  if (finished_) return;
  draw(true);
  finished_ = true;
}

void ProgressBar::draw(bool final) {
  const double elapsed = timer_.seconds();
  const double fraction = total_ > 0 ? static_cast<double>(done_) / total_ : 1.0;
  const double eta = done_ > 0 ? elapsed / done_ * (total_ - done_) : 0.0;
  const std::string rate =
      items_ > 0 && elapsed > 0 ? fmt::format(" {:.0f}/s", items_ / elapsed) : std::string();
  if (live_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    fmt::print(stderr, "\r{} [{}{}] {}/{} {} {:.0f}s<{:.0f}s{} {}\033[K{}", what_,
               std::string(filled, '='), std::string(kWidth - filled, ' '), done_, total_, unit_,
               elapsed, eta, rate, status_, final ? "\n" : "");
  } else if (final || done_ > 0) {
    fmt::print(stderr, "{} {}/{} {} ({:.0f}%) {:.1f}s{} {}\n", what_, done_, total_, unit_,
               fraction * 100, elapsed, rate, status_);
  }
  std::fflush(stderr);
}

Heartbeat::Heartbeat(std::string what, double interval_seconds) {
  thread_ = std::thread([this, what = std::move(what), interval_seconds] {
    const Timer timer;
    const auto interval = std::chrono::duration<double>(interval_seconds);
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval, [this] { return done_; })) {
      spdlog::info("{}: still running ({:.0f} s)", what, timer.seconds());
    }
  });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

}  // namespace graphloom
