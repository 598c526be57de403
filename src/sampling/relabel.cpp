// Relabeling in parallel passes instead of one serial first-appearance pass (which left one
// core idle for a fifth of each batch and numbered sources in random order, so the gather that
// follows read the feature table in random order):
//   1. number the destinations;
//   2. mark every pick in a per-thread bitmap (no atomics, no id-table access);
//   3. merge the bitmaps word by word, dropping destinations: the new neighbors in ascending
//      order, so the id table is read and written forwards here;
//   4. look every pick up (the one random pass), then reset the table.
#include "graphloom/sampling/relabel.h"

#include <ATen/ATen.h>
#include <omp.h>

#include <algorithm>

#include "graphloom/base/error.h"

namespace graphloom::sampling {
namespace {

// Below this many elements a pass runs on the calling thread: forking costs more.
constexpr int64_t kParallelGrain = 16384;
// Scan the bitmaps only when they are not much bigger than the picks; a few picks on a huge
// graph are collected and sorted instead.
constexpr int64_t kWordsPerPickToScan = 4;
// The id table is bigger than L2: keep this many lookups in flight.
constexpr int64_t kAhead = 16;

uint64_t bit_of(int64_t node) { return uint64_t{1} << (node & 63); }

void mark_picks(const int64_t* picked, int64_t num_picks, std::vector<uint64_t>* bitmaps,
                int threads) {
#pragma omp parallel num_threads(threads)
  {
    uint64_t* seen = bitmaps[omp_get_thread_num()].data();
#pragma omp for schedule(static)
    for (int64_t j = 0; j < num_picks; ++j) seen[picked[j] >> 6] |= bit_of(picked[j]);
  }
}

// Merges the bitmaps into the first one, keeping only nodes without a local id yet, and
// numbers those after the destinations in ascending order. Each thread owns a range of words:
// it counts its new nodes, then writes them from its offset.
at::Tensor number_new_neighbors(const int64_t* dst, int64_t num_dst, int32_t* table,
                                std::vector<uint64_t>* bitmaps, int threads) {
  uint64_t* merged = bitmaps[0].data();
  const auto num_words = static_cast<int64_t>(bitmaps[0].size());
  const int64_t chunk = (num_words + threads - 1) / threads;
  std::vector<int64_t> offset(static_cast<std::size_t>(threads) + 1, 0);
#pragma omp parallel for schedule(static, 1) num_threads(threads)
  for (int t = 0; t < threads; ++t) {
    int64_t count = 0;
    const int64_t end = std::min(num_words, (t + 1) * chunk);
    for (int64_t w = t * chunk; w < end; ++w) {
      uint64_t bits = merged[w];
      for (int other = 1; other < threads; ++other) {
        bits |= bitmaps[other][static_cast<std::size_t>(w)];
        bitmaps[other][static_cast<std::size_t>(w)] = 0;
      }
      for (uint64_t rest = bits; rest != 0; rest &= rest - 1) {
        const int64_t v = w * 64 + __builtin_ctzll(rest);
        if (table[v] >= 0) bits &= ~bit_of(v);
      }
      merged[w] = bits;
      count += __builtin_popcountll(bits);
    }
    offset[static_cast<std::size_t>(t) + 1] = count;
  }
  offset[0] = num_dst;
  for (int t = 0; t < threads; ++t) offset[t + 1] += offset[t];
  at::Tensor src_ids = at::empty({offset.back()}, at::kLong);
  int64_t* src = src_ids.data_ptr<int64_t>();
  std::copy(dst, dst + num_dst, src);
#pragma omp parallel for schedule(static, 1) num_threads(threads)
  for (int t = 0; t < threads; ++t) {
    int64_t next = offset[static_cast<std::size_t>(t)];
    const int64_t end = std::min(num_words, (t + 1) * chunk);
    for (int64_t w = t * chunk; w < end; ++w) {
      for (uint64_t bits = merged[w]; bits != 0; bits &= bits - 1) {
        const int64_t v = w * 64 + __builtin_ctzll(bits);
        table[v] = static_cast<int32_t>(next);
        src[next++] = v;
      }
      merged[w] = 0;
    }
  }
  return src_ids;
}

// The sparse counterpart of mark + number: collect the new neighbors, then sort them.
at::Tensor collect_new_neighbors(const int64_t* dst, int64_t num_dst, const int64_t* picked,
                                 int64_t num_picks, int32_t* table, uint64_t* seen) {
  std::vector<int64_t> fresh;
  for (int64_t j = 0; j < num_picks; ++j) {
    const int64_t v = picked[j];
    if (table[v] >= 0 || (seen[v >> 6] & bit_of(v)) != 0) continue;
    seen[v >> 6] |= bit_of(v);
    fresh.push_back(v);
  }
  std::sort(fresh.begin(), fresh.end());
  at::Tensor src_ids = at::empty({num_dst + static_cast<int64_t>(fresh.size())}, at::kLong);
  int64_t* src = src_ids.data_ptr<int64_t>();
  std::copy(dst, dst + num_dst, src);
  for (std::size_t k = 0; k < fresh.size(); ++k) {
    const int64_t v = fresh[k];
    seen[v >> 6] = 0;
    table[v] = static_cast<int32_t>(num_dst + static_cast<int64_t>(k));
    src[num_dst + static_cast<int64_t>(k)] = v;
  }
  return src_ids;
}

}  // namespace

RelabelWorkspace::RelabelWorkspace(int64_t num_nodes)
    : local_id(static_cast<std::size_t>(num_nodes), -1) {}

Relabeled relabel(const at::Tensor& dst, const at::Tensor& neighbors, RelabelWorkspace& workspace) {
  const int64_t num_dst = dst.numel();
  const int64_t num_picks = neighbors.numel();
  const int64_t* dst_ptr = dst.data_ptr<int64_t>();
  const int64_t* picked = neighbors.data_ptr<int64_t>();
  int32_t* table = workspace.local_id.data();
  const int64_t num_words = (workspace.num_nodes() + 63) / 64;
  const int threads = num_picks > kParallelGrain ? omp_get_max_threads() : 1;
  const bool scan = num_words * threads <= kWordsPerPickToScan * num_picks;
  const std::size_t bitmaps = scan ? static_cast<std::size_t>(threads) : 1;
  if (workspace.seen.size() < bitmaps) workspace.seen.resize(bitmaps);
  for (std::size_t t = 0; t < bitmaps; ++t) {
    workspace.seen[t].resize(static_cast<std::size_t>(num_words), 0);
  }

  // A repeated destination keeps one of its positions here; the reset pass below finds it.
#pragma omp parallel for schedule(static) if (num_dst > kParallelGrain)
  for (int64_t i = 0; i < num_dst; ++i) table[dst_ptr[i]] = static_cast<int32_t>(i);
  at::Tensor src_ids;
  if (scan) {
    mark_picks(picked, num_picks, workspace.seen.data(), threads);
    src_ids = number_new_neighbors(dst_ptr, num_dst, table, workspace.seen.data(), threads);
  } else {
    src_ids =
        collect_new_neighbors(dst_ptr, num_dst, picked, num_picks, table, workspace.seen[0].data());
  }

  at::Tensor indices = at::empty({num_picks}, at::kLong);
  int64_t* index = indices.data_ptr<int64_t>();
#pragma omp parallel for schedule(static) if (num_picks > kParallelGrain)
  for (int64_t j = 0; j < num_picks; ++j) {
    if (j + kAhead < num_picks) __builtin_prefetch(table + picked[j + kAhead]);
    index[j] = table[picked[j]];
  }

  const int64_t* src = src_ids.data_ptr<int64_t>();
  const int64_t num_src = src_ids.numel();
  int64_t repeated = -1;
#pragma omp parallel for schedule(static) if (num_src > kParallelGrain) reduction(max : repeated)
  for (int64_t i = 0; i < num_src; ++i) {
    // Another position of the same node may already have reset it: -1 also means repeated.
    if (i < num_dst && table[src[i]] != static_cast<int32_t>(i)) repeated = src[i];
    table[src[i]] = -1;
  }
  GL_CHECK(repeated < 0, "duplicate seed node {} in one mini-batch", repeated);
  return {src_ids, indices};
}

}  // namespace graphloom::sampling
