// /proc/self/status readers and one place that sets thread counts.
#include "graphloom/base/system.h"

#include <ATen/Parallel.h>
#include <omp.h>

#include <fstream>
#include <string>

namespace graphloom {
namespace {

int64_t status_field_bytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size())) * 1024;  // kB
  }
  return 0;
}

}  // namespace

int64_t peak_rss_bytes() { return status_field_bytes("VmHWM:"); }
int64_t current_rss_bytes() { return status_field_bytes("VmRSS:"); }

void set_num_threads(int num_threads) {
  if (num_threads <= 0) return;
  omp_set_num_threads(num_threads);
  at::set_num_threads(num_threads);
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace graphloom
