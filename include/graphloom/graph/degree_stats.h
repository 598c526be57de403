// Summary statistics of a degree array, for `graphloom inspect` and progress output.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace graphloom::graph {

struct DegreeStats {
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0.0;
  int64_t num_zero = 0;  // nodes with degree 0
};

// `degrees`: int64 [num_nodes].
DegreeStats degree_stats(const at::Tensor& degrees);

}  // namespace graphloom::graph
