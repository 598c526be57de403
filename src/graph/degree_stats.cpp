// Degree summaries.
#include "graphloom/graph/degree_stats.h"

#include <ATen/ATen.h>

namespace graphloom::graph {

DegreeStats degree_stats(const at::Tensor& degrees) {
  DegreeStats stats;
  if (degrees.numel() == 0) return stats;
  stats.min = degrees.min().item<int64_t>();
  stats.max = degrees.max().item<int64_t>();
  stats.mean = degrees.to(at::kDouble).mean().item<double>();
  stats.num_zero = (degrees == 0).sum().item<int64_t>();
  return stats;
}

}  // namespace graphloom::graph
