// COO -> CSC by a stable parallel counting sort over destinations.
//
// Each thread counts the destinations of one contiguous chunk of edges, the per-thread counts
// become per-thread write offsets, and each thread scatters its chunk in input order. The
// result is deterministic and stable whatever the thread count.
#include "graphloom/graph/build.h"

#include <ATen/ATen.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/base/huge_pages.h"
#include "graphloom/graph/schema.h"

namespace graphloom::graph {
namespace {

template <typename In, typename Out>
void scatter_edges(const CooInput& input, int num_chunks, CscGraph& out, at::Tensor& order) {
  const int64_t num_edges = input.src.numel();
  const int64_t num_nodes = input.num_nodes;
  const In* src = input.src.data_ptr<In>();
  const In* dst = input.dst.data_ptr<In>();
  const int64_t src_stride = input.src.stride(0);
  const int64_t dst_stride = input.dst.stride(0);
  const int64_t chunk = (num_edges + num_chunks - 1) / std::max(num_chunks, 1);

  // Pass 1: per-chunk histograms of destinations, with the range check folded in.
  std::vector<std::vector<int64_t>> counts(num_chunks);
  std::atomic<int64_t> first_bad{num_edges};
#pragma omp parallel for num_threads(num_chunks) schedule(static, 1)
  for (int c = 0; c < num_chunks; ++c) {
    counts[c].assign(num_nodes, 0);
    int64_t* count = counts[c].data();
    const int64_t end = std::min(num_edges, (c + 1) * chunk);
    for (int64_t e = c * chunk; e < end; ++e) {
      const int64_t s = src[e * src_stride];
      const int64_t d = dst[e * dst_stride];
      if (static_cast<uint64_t>(s) >= static_cast<uint64_t>(num_nodes) ||
          static_cast<uint64_t>(d) >= static_cast<uint64_t>(num_nodes)) [[unlikely]] {
        int64_t seen = first_bad.load();
        while (e < seen && !first_bad.compare_exchange_weak(seen, e)) {
        }
        break;
      }
      ++count[d];
    }
  }
  if (const int64_t bad = first_bad.load(); bad < num_edges) {
    GL_THROW("edge {} ({} -> {}) has an endpoint outside [0, {})", bad,
             static_cast<int64_t>(src[bad * src_stride]),
             static_cast<int64_t>(dst[bad * dst_stride]), num_nodes);
  }

  // Degrees -> indptr (exclusive scan), then per-chunk write offsets inside each column.
  int64_t* indptr = out.indptr.data_ptr<int64_t>();
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < num_nodes; ++v) {
    int64_t degree = 0;
    for (int c = 0; c < num_chunks; ++c) degree += counts[c][v];
    indptr[v + 1] = degree;
  }
  indptr[0] = 0;
  for (int64_t v = 0; v < num_nodes; ++v) indptr[v + 1] += indptr[v];
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < num_nodes; ++v) {
    int64_t offset = indptr[v];
    for (int c = 0; c < num_chunks; ++c) {
      const int64_t count = counts[c][v];
      counts[c][v] = offset;
      offset += count;
    }
  }

  // Pass 2: stable scatter; `order` (when requested) records each edge's input position.
  Out* indices = out.indices.data_ptr<Out>();
  int64_t* order_out = order.defined() ? order.data_ptr<int64_t>() : nullptr;
#pragma omp parallel for num_threads(num_chunks) schedule(static, 1)
  for (int c = 0; c < num_chunks; ++c) {
    int64_t* offset = counts[c].data();
    const int64_t end = std::min(num_edges, (c + 1) * chunk);
    for (int64_t e = c * chunk; e < end; ++e) {
      const int64_t pos = offset[dst[e * dst_stride]]++;
      indices[pos] = static_cast<Out>(src[e * src_stride]);
      if (order_out != nullptr) order_out[pos] = e;
    }
  }
}

}  // namespace

CscGraph csc_from_coo(const CooInput& input) {
  GL_CHECK(input.num_nodes >= 0, "num_nodes must be >= 0, got {}", input.num_nodes);
  GL_CHECK(input.src.defined() && input.dst.defined() && input.src.dim() == 1 &&
               input.dst.dim() == 1 && input.src.numel() == input.dst.numel(),
           "edge list: src and dst must be 1-D arrays of equal length");
  GL_CHECK(input.src.scalar_type() == input.dst.scalar_type(),
           "edge list: src and dst must have the same dtype");
  const int64_t num_edges = input.src.numel();
  if (input.weights.defined()) {
    GL_CHECK(input.weights.dim() == 1 && input.weights.numel() == num_edges,
             "edge weights: expected {} values (one per edge), got {}", num_edges,
             input.weights.numel());
  }
  if (input.edge_ids.defined()) {
    GL_CHECK(input.edge_ids.scalar_type() == at::kLong && input.edge_ids.numel() == num_edges,
             "edge ids: expected int64 [{}]", num_edges);
  }
  if (input.edge_time.defined()) {
    GL_CHECK(input.edge_time.scalar_type() == at::kLong && input.edge_time.numel() == num_edges,
             "edge times: expected int64 [{}] (one per edge)", num_edges);
  }
  if (input.edge_types.defined()) {
    GL_CHECK(input.edge_types.dim() == 1 && input.edge_types.numel() == num_edges,
             "edge types: expected {} values (one per edge), got {}", num_edges,
             input.edge_types.numel());
  }

  CscGraph out;
  out.num_nodes = input.num_nodes;
  // Sampling reads both at random: huge pages spare it a TLB miss per access.
  out.indptr = empty_on_huge_pages({input.num_nodes + 1}, at::kLong);
  out.indices = empty_on_huge_pages({num_edges}, index_dtype_for(input.num_nodes));
  // The input position of every CSC entry, when edge ids or weights must follow the edges.
  at::Tensor order;
  if (input.keep_edge_ids || input.weights.defined() || input.edge_types.defined() ||
      input.edge_time.defined()) {
    order = at::empty({num_edges}, at::kLong);
  }

  // Per-thread histograms cost num_nodes * 8 bytes each: never more than the indices array.
  const int64_t budget = std::max<int64_t>(1, num_edges / std::max<int64_t>(1, input.num_nodes));
  const int num_chunks =
      static_cast<int>(std::clamp<int64_t>(budget, 1, std::max(1, omp_get_max_threads())));

  dispatch_index_type(input.src.scalar_type(), "edge list", [&](auto in_tag) {
    using In = decltype(in_tag);
    dispatch_index_type(out.indices.scalar_type(), "indices", [&](auto out_tag) {
      using Out = decltype(out_tag);
      scatter_edges<In, Out>(input, num_chunks, out, order);
    });
  });

  if (input.weights.defined()) out.weights = input.weights.index_select(0, order);
  if (input.edge_time.defined()) out.edge_time = input.edge_time.index_select(0, order);
  if (input.keep_edge_ids) {
    out.edge_ids = input.edge_ids.defined() ? input.edge_ids.index_select(0, order) : order;
  }
  if (input.edge_types.defined()) {
    out.type_per_edge = input.edge_types.index_select(0, order);
    out = sort_columns_by_edge_type(out);
    if (!input.keep_edge_ids) out.edge_ids = at::Tensor();
  }
  return out;
}

}  // namespace graphloom::graph
