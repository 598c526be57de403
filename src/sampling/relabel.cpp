// One pass in pick order through a dense node -> local id table. First-appearance order is
// what the model's aggregation wants: the new sources of consecutive destinations get
// consecutive ids, so the first layer reads its input rows almost sequentially. Numbering
// them in ascending global id instead (parallel, via bitmaps) made the loader's gather read
// the feature table forwards but cost training 15% (`bench train --data er`: 1,731 vs 2,021
// seeds/s, same session), so this order stays. Temporal blocks relabel (node, time) pairs
// instead, through a hash table of the call's pairs.
#include "graphloom/sampling/relabel.h"

#include <ATen/ATen.h>

#include <tuple>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/base/huge_pages.h"
#include "graphloom/base/random.h"

namespace graphloom::sampling {

RelabelWorkspace::RelabelWorkspace(int64_t num_nodes)
    : table(empty_on_huge_pages({num_nodes}, at::kInt).fill_(-1)) {}

Relabeled relabel(const at::Tensor& dst, const at::Tensor& neighbors, RelabelWorkspace& workspace) {
  if (!neighbors.is_cpu()) return relabel_with_tensor_ops(dst.to(neighbors.device()), neighbors);
  const int64_t num_dst = dst.numel();
  const int64_t num_picks = neighbors.numel();
  const int64_t* dst_ptr = dst.data_ptr<int64_t>();
  const int64_t* picked = neighbors.data_ptr<int64_t>();
  int32_t* table = workspace.local_id();
  // Upper bound on the source count; trimmed at the end.
  at::Tensor src_ids = at::empty({num_dst + num_picks}, at::kLong);
  int64_t* src = src_ids.data_ptr<int64_t>();
  at::Tensor indices = at::empty({num_picks}, at::kLong);
  int64_t* index = indices.data_ptr<int64_t>();

  int64_t count = 0;
  for (int64_t i = 0; i < num_dst; ++i) {
    const int64_t v = dst_ptr[i];
    if (table[v] >= 0) [[unlikely]] {
      for (int64_t k = 0; k < count; ++k) table[src[k]] = -1;  // leave the table clean
      GL_THROW("duplicate seed node {} in one mini-batch", v);
    }
    table[v] = static_cast<int32_t>(count);
    src[count++] = v;
  }
  constexpr int64_t kAhead = 16;  // the table is bigger than L2: keep misses in flight
  for (int64_t j = 0; j < num_picks; ++j) {
    if (j + kAhead < num_picks) __builtin_prefetch(table + picked[j + kAhead]);
    const int64_t v = picked[j];
    int32_t id = table[v];
    if (id < 0) {
      id = static_cast<int32_t>(count);
      table[v] = id;
      src[count++] = v;
    }
    index[j] = id;
  }
  for (int64_t i = 0; i < count; ++i) table[src[i]] = -1;
  return {src_ids.slice(0, 0, count), indices};
}

namespace {

// An open-addressing (node, time) -> local id table for one relabel_timed call, thread-local
// and reused: a hub reached from seeds of a thousand times costs one probe, not a walk over
// its thousand sources.
class TimedIds {
 public:
  explicit TimedIds(int64_t max_entries) {
    std::size_t capacity = 16;
    while (capacity < static_cast<std::size_t>(2 * max_entries)) capacity *= 2;
    slots().assign(capacity, Slot{});
    mask_ = capacity - 1;
  }
  ~TimedIds() {
    if (slots().capacity() * sizeof(Slot) > (std::size_t{16} << 20))
      std::vector<Slot>().swap(slots());
  }
  TimedIds(const TimedIds&) = delete;
  TimedIds& operator=(const TimedIds&) = delete;

  void prefetch(int64_t node, int64_t time) const {
    __builtin_prefetch(&slots()[slot_of(node, time)]);
  }

  // The id of (node, time), inserting `next_id` when absent; `inserted` says which.
  int64_t find_or_insert(int64_t node, int64_t time, int64_t next_id, bool& inserted) {
    std::vector<Slot>& table = slots();
    std::size_t i = slot_of(node, time);
    while (table[i].id >= 0) {
      if (table[i].node == node && table[i].time == time) {
        inserted = false;
        return table[i].id;
      }
      i = (i + 1) & mask_;
    }
    table[i] = {time, static_cast<int32_t>(node), static_cast<int32_t>(next_id)};
    inserted = true;
    return next_id;
  }

 private:
  // Node and local ids fit in int32 (NeighborSampler keeps graphs below 2^31 nodes): 16 bytes.
  struct Slot {
    int64_t time = 0;
    int32_t node = 0;
    int32_t id = -1;
  };
  std::size_t slot_of(int64_t node, int64_t time) const {
    return mix64(static_cast<uint64_t>(node) ^ mix64(static_cast<uint64_t>(time))) & mask_;
  }
  static std::vector<Slot>& slots() {
    thread_local std::vector<Slot> table;
    return table;
  }
  std::size_t mask_ = 0;
};

}  // namespace

Relabeled relabel_timed(const at::Tensor& dst, const at::Tensor& dst_times,
                        const at::Tensor& neighbors, const at::Tensor& neighbor_times) {
  if (!neighbors.is_cpu()) {
    const c10::Device device = neighbors.device();
    return relabel_with_tensor_ops(dst.to(device), neighbors, dst_times.to(device),
                                   neighbor_times.to(device));
  }
  const int64_t num_dst = dst.numel();
  const int64_t num_picks = neighbors.numel();
  const at::Tensor dst_c = dst.contiguous();
  const at::Tensor dst_times_c = dst_times.contiguous();
  const at::Tensor picked_times_c = neighbor_times.contiguous();
  const int64_t* dst_ptr = dst_c.data_ptr<int64_t>();
  const int64_t* dst_time = dst_times_c.data_ptr<int64_t>();
  const int64_t* picked = neighbors.data_ptr<int64_t>();
  const int64_t* picked_time = picked_times_c.data_ptr<int64_t>();
  at::Tensor src_ids = at::empty({num_dst + num_picks}, at::kLong);
  at::Tensor src_times = at::empty({num_dst + num_picks}, at::kLong);
  at::Tensor indices = at::empty({num_picks}, at::kLong);
  int64_t* src = src_ids.data_ptr<int64_t>();
  int64_t* time = src_times.data_ptr<int64_t>();
  int64_t* index = indices.data_ptr<int64_t>();
  TimedIds ids(num_dst + num_picks);
  int64_t count = 0;
  bool inserted = false;
  for (int64_t i = 0; i < num_dst; ++i) {
    ids.find_or_insert(dst_ptr[i], dst_time[i], count, inserted);
    GL_CHECK(inserted, "duplicate seed node {} at time {} in one mini-batch", dst_ptr[i],
             dst_time[i]);
    src[count] = dst_ptr[i];
    time[count++] = dst_time[i];
  }
  constexpr int64_t kAhead = 16;  // the table is bigger than L2: keep misses in flight
  for (int64_t j = 0; j < num_picks; ++j) {
    if (j + kAhead < num_picks) ids.prefetch(picked[j + kAhead], picked_time[j + kAhead]);
    index[j] = ids.find_or_insert(picked[j], picked_time[j], count, inserted);
    if (inserted) {
      src[count] = picked[j];
      time[count++] = picked_time[j];
    }
  }
  return {src_ids.slice(0, 0, count), indices, src_times.slice(0, 0, count)};
}

// Sorting dst and the picks together (stably) groups each node's (each (node, time) pair's)
// occurrences with its first one in front; numbering the groups by the position of that first
// occurrence gives the table pass's first-appearance order.
Relabeled relabel_with_tensor_ops(const at::Tensor& dst, const at::Tensor& neighbors,
                                  const at::Tensor& dst_times, const at::Tensor& neighbor_times) {
  const int64_t num_dst = dst.numel();
  const bool timed = dst_times.defined();
  const at::Tensor all = at::cat({dst, neighbors});
  const at::Tensor all_times = timed ? at::cat({dst_times, neighbor_times}) : at::Tensor();
  if (all.numel() == 0) return {all, neighbors.clone(), all_times};
  // By node, stably; with times lexicographic (node, time): by time first, then by node.
  at::Tensor sorted, order;
  if (timed) {
    const at::Tensor by_time = std::get<1>(all_times.sort(/*stable=*/true, /*dim=*/0, false));
    const auto [nodes, by_node] = all.index_select(0, by_time).sort(/*stable=*/true, 0, false);
    sorted = nodes;
    order = by_time.index_select(0, by_node);
  } else {
    std::tie(sorted, order) = all.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false);
  }
  at::Tensor differs = sorted.slice(0, 1) != sorted.slice(0, 0, sorted.numel() - 1);
  if (timed) {
    const at::Tensor sorted_times = all_times.index_select(0, order);
    differs.logical_or_(sorted_times.slice(0, 1) != sorted_times.slice(0, 0, sorted.numel() - 1));
  }
  const at::Tensor starts_group =
      at::cat({at::ones({1}, sorted.options().dtype(at::kBool)), differs});
  const at::Tensor group = starts_group.cumsum(0) - 1;
  const at::Tensor first_position = order.masked_select(starts_group);
  const auto [src_positions, group_by_rank] = first_position.sort();
  at::Tensor local_of_group = at::empty_like(group_by_rank);
  local_of_group.index_put_({group_by_rank}, at::arange(group_by_rank.numel(), order.options()));
  at::Tensor local = at::empty_like(order);
  local.index_put_({order}, local_of_group.index_select(0, group));
  // Distinct destinations number themselves 0..num_dst-1; the first that does not repeats one.
  const at::Tensor repeated =
      (local.slice(0, 0, num_dst) != at::arange(num_dst, order.options())).nonzero();
  if (repeated.numel() > 0) {
    const int64_t at = repeated[0][0].item<int64_t>();
    if (timed) {
      GL_THROW("duplicate seed node {} at time {} in one mini-batch", dst[at].item<int64_t>(),
               dst_times[at].item<int64_t>());
    }
    GL_THROW("duplicate seed node {} in one mini-batch", dst[at].item<int64_t>());
  }
  return {all.index_select(0, src_positions), local.slice(0, num_dst),
          timed ? all_times.index_select(0, src_positions) : at::Tensor()};
}

}  // namespace graphloom::sampling
