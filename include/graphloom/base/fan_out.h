// fan_out: one blocking call per index, run concurrently on the shared thread pool, results in
// index order. The one fan-out of the RPC layers: a call per part of a DistGraph request, a call
// per chunk of a large request to one server.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <future>
#include <optional>
#include <vector>

#include "graphloom/base/cached_thread_pool.h"

namespace graphloom {

// Calls `call(k)` for every k in `indices` (each in [0, slots)), at most `max_in_flight` at a
// time on CachedThreadPool::shared(); `inline_index`, when it is one of them, runs on the
// calling thread meanwhile (e.g. the part this process holds). After a failure no further call
// starts. Returns once every started call has ended (none is left running on the caller's
// objects), rethrowing the failure of the lowest index; otherwise slot k holds call(k)'s
// result, and slots not in `indices` are empty. Slots are std::optional, not a bare
// std::vector<Result>: for bool its elements are bits of shared words, and concurrent writes to
// them race.
template <typename Result, typename Call>
std::vector<std::optional<Result>> fan_out(std::size_t slots, std::vector<int64_t> indices,
                                           std::size_t max_in_flight, Call&& call,
                                           int64_t inline_index = -1) {
  std::vector<std::optional<Result>> results(slots);
  std::vector<std::exception_ptr> failures(slots);
  std::atomic<bool> failed{false};
  const auto run = [&](int64_t k) {
    try {
      results[static_cast<std::size_t>(k)].emplace(call(k));
    } catch (...) {
      failures[static_cast<std::size_t>(k)] = std::current_exception();
      failed = true;
    }
  };
  const auto inline_at = std::find(indices.begin(), indices.end(), inline_index);
  const bool run_inline = inline_index >= 0 && inline_at != indices.end();
  if (run_inline) indices.erase(inline_at);
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i; !failed && (i = next++) < indices.size();) run(indices[i]);
  };
  std::vector<std::future<void>> workers;
  if (indices.size() == 1 && !run_inline) {
    run(indices[0]);  // nothing to overlap with: no thread hop
  } else {
    const std::size_t threads = std::min(indices.size(), std::max<std::size_t>(max_in_flight, 1));
    for (std::size_t t = 0; t < threads; ++t) {
      workers.push_back(CachedThreadPool::shared().submit(worker));
    }
  }
  if (run_inline) run(inline_index);
  for (auto& w : workers) w.wait();  // `run` catches: the workers themselves never fail
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
  return results;
}

}  // namespace graphloom
