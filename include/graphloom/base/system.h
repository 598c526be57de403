// Process facts for progress lines and benchmarks: memory use and thread settings.
#pragma once

#include <cstdint>

namespace graphloom {

// Peak resident set size of this process in bytes (VmHWM), or 0 where unavailable.
int64_t peak_rss_bytes();
// Current resident set size in bytes (VmRSS), or 0 where unavailable.
int64_t current_rss_bytes();

// Sets the threads used by graphloom's OpenMP kernels and by ATen's intra-op pool.
// `num_threads <= 0` keeps the default (all cores).
void set_num_threads(int num_threads);
int num_threads();

}  // namespace graphloom
