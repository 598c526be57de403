// /proc/self/status readers and one place that sets thread counts.
#include "graphloom/base/system.h"

#include "graphloom/base/error.h"
#include "graphloom/base/large_block_cache.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <malloc.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

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

namespace {

// What this process's memory cgroup may still allocate, or -1 without a limit: v2's
// memory.max / memory.current, or v1's memory.limit_in_bytes / memory.usage_in_bytes (its
// directory under the mount, or the mount itself in a cgroup namespace).
int64_t cgroup_headroom_bytes() {
  const auto headroom = [](const std::string& limit_file, const std::string& usage_file) {
    std::ifstream limit_in(limit_file);
    std::ifstream usage_in(usage_file);
    std::string limit;
    int64_t usage = 0;
    if (!(limit_in >> limit) || limit == "max" || !(usage_in >> usage)) return int64_t{-1};
    const int64_t bytes = std::stoll(limit);
    if (bytes >= (int64_t{1} << 60)) return int64_t{-1};  // v1's "unlimited"
    return std::max<int64_t>(0, bytes - usage);
  };
  std::ifstream membership("/proc/self/cgroup");
  std::string line;
  while (std::getline(membership, line)) {
    if (line.rfind("0::", 0) == 0 && std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers")) {
      const std::string dir = "/sys/fs/cgroup" + line.substr(3);
      return headroom(dir + "/memory.max", dir + "/memory.current");
    }
    if (const auto at = line.find(":memory:"); at != std::string::npos) {
      for (const std::string& dir :
           {"/sys/fs/cgroup/memory" + line.substr(at + 8), std::string("/sys/fs/cgroup/memory")}) {
        if (std::filesystem::exists(dir + "/memory.limit_in_bytes"))
          return headroom(dir + "/memory.limit_in_bytes", dir + "/memory.usage_in_bytes");
      }
    }
  }
  return -1;
}

}  // namespace

int64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kilobytes = 0;
  std::string unit;
  int64_t available = 0;
  while (meminfo >> key >> kilobytes >> unit) {
    if (key == "MemAvailable:") {
      available = kilobytes * 1024;
      break;
    }
  }
  const int64_t headroom = cgroup_headroom_bytes();
  return headroom >= 0 && available > 0 ? std::min(available, headroom) : available;
}

void keep_freed_heap_pages(int largest_kept_block) {
  mallopt(M_MMAP_THRESHOLD, std::min(largest_kept_block, 32 << 20));  // glibc refuses more
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void release_free_heap_memory() { malloc_trim(0); }

void limit_malloc_arenas(int arenas) { mallopt(M_ARENA_MAX, arenas); }

void configure_allocator() {
  // One arena: per-thread arenas cap their heaps at 64 MB and fall back to mmap() for larger
  // blocks, such as a batch's feature rows (hundreds of MB) gathered in loader workers.
  // The few large allocations per batch make arena contention irrelevant. Tensors from 4 MB up
  // do not reach malloc at all: they come from the large-block cache.
  mallopt(M_ARENA_MAX, 1);
  keep_freed_heap_pages();
  install_large_block_cache();
}

void set_num_threads(int num_threads) {
  // libtorch may have pinned OpenMP to one thread at load time: always set it explicitly.
  // OMP_NUM_THREADS is honoured as libtorch does (launchers give each process its share).
  if (num_threads <= 0) {
    const char* env = std::getenv("OMP_NUM_THREADS");
    num_threads = env != nullptr ? std::atoi(env) : 0;
  }
  if (num_threads <= 0)
    num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  omp_set_num_threads(num_threads);
  // Not at::set_num_threads: it stores the count, and from then on every new thread's first
  // ATen parallel op re-applies it, which destroys and re-creates libtorch's pthreadpool
  // (2 threads spinning for a while) — with the RPC and loader threads that cost up to half
  // of the CPU (perf: 43% in libpthreadpool under `bench dist`). New threads instead take the
  // count from OMP_NUM_THREADS in ATen's lazy per-thread initialisation.
  ::setenv("OMP_NUM_THREADS", std::to_string(num_threads).c_str(), 1);
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace graphloom
