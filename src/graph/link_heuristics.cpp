// Common neighbours by merging the two sorted neighbor lists of each pair.
#include "graphloom/graph/link_heuristics.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "graphloom/base/error.h"

namespace graphloom::graph {

at::Tensor common_neighbor_counts(const CscGraph& graph, const at::Tensor& pairs) {
  GL_CHECK(pairs.dim() == 2 && pairs.size(1) == 2, "node pairs must be [M, 2], got {}",
           pairs.sizes());
  const int64_t n = graph.num_nodes;
  const at::Tensor indptr = graph.indptr.contiguous();
  const at::Tensor indices = graph.indices.to(at::kLong).contiguous();
  const int64_t* ptr = indptr.data_ptr<int64_t>();
  // Each column sorted and without repeats, once.
  std::vector<int64_t> sorted(indices.data_ptr<int64_t>(),
                              indices.data_ptr<int64_t>() + indices.numel());
  std::vector<int64_t> ends(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t v = 0; v < n; ++v) {
    auto begin = sorted.begin() + ptr[v];
    std::sort(begin, sorted.begin() + ptr[v + 1]);
    ends[v] = std::unique(begin, sorted.begin() + ptr[v + 1]) - sorted.begin();
  }
  const at::Tensor both = pairs.to(at::kLong).contiguous();
  const int64_t* pair = both.data_ptr<int64_t>();
  const int64_t m = both.size(0);
  if (m > 0) {
    GL_CHECK(both.min().item<int64_t>() >= 0 && both.max().item<int64_t>() < n,
             "node pairs must hold ids in [0, {})", n);
  }
  at::Tensor counts = at::zeros({m}, at::kFloat);
  float* count = counts.data_ptr<float>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    const int64_t u = pair[2 * i];
    const int64_t v = pair[2 * i + 1];
    const int64_t* a = sorted.data() + ptr[u];
    const int64_t* a_end = sorted.data() + ends[u];
    const int64_t* b = sorted.data() + ptr[v];
    const int64_t* b_end = sorted.data() + ends[v];
    int64_t common = 0;
    while (a < a_end && b < b_end) {
      if (*a < *b) {
        ++a;
      } else if (*b < *a) {
        ++b;
      } else {
        ++common, ++a, ++b;
      }
    }
    count[i] = static_cast<float>(common);
  }
  return counts;
}

}  // namespace graphloom::graph
