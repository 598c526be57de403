// Process facts for progress lines and benchmarks: memory use and thread settings.
#pragma once

#include <cstdint>

namespace graphloom {

// Peak resident set size of this process in bytes (VmHWM), or 0 where unavailable.
int64_t peak_rss_bytes();
// Current resident set size in bytes (VmRSS), or 0 where unavailable.
int64_t current_rss_bytes();
// Memory this process may still use: the kernel's MemAvailable, capped by what the process's
// cgroup (v2 memory.max) leaves; 0 where unknown.
int64_t available_memory_bytes();

// Keeps large freed blocks instead of returning them to the kernel: mini-batch buffers and
// activations are allocated and freed every batch, and by default glibc serves them with fresh
// mmap()s whose page faults and zeroing cost ~10% of sampling time and half of training's
// throughput. Tensors from 4 MB up go to a LargeBlockCache (large_block_cache.h), smaller ones
// to one malloc heap that is never trimmed.
void configure_allocator();

// Serves malloc blocks of up to `largest_kept_block` bytes (at most 32 MB, glibc's maximum)
// from heaps that are never trimmed, so that a block freed after one request is reused by the
// next without page faults; larger ones are mapped and unmapped each time. For processes whose
// big buffers come and go on many threads (graph servers' responses), where the single heap and
// huge-page block cache of configure_allocator() are not wanted.
void keep_freed_heap_pages(int largest_kept_block = 32 << 20);

// At most `arenas` malloc heaps, however many threads allocate (glibc's M_ARENA_MAX).
void limit_malloc_arenas(int arenas);

// Returns the free pages of every malloc heap to the kernel (glibc's malloc_trim): for a
// process that kept them (keep_freed_heap_pages) and is now idle.
void release_free_heap_memory();

// Sets the threads used by graphloom's OpenMP kernels and by ATen's intra-op pool.
// `num_threads <= 0` means OMP_NUM_THREADS when set, else one per core.
void set_num_threads(int num_threads);
int num_threads();

}  // namespace graphloom
