// Random assignment (a balanced round-robin, permuted, so part sizes differ by at most one),
// the METIS scheme choice and the edge cut. METIS and streaming have files of their own.
#include "graphloom/partition/assign.h"

#include <ATen/ATen.h>

#include <utility>

#include "graphloom/base/dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/base/random.h"

namespace graphloom::partition {

MetisScheme resolve_metis_scheme(MetisScheme scheme, int64_t parts) {
  if (scheme != MetisScheme::kAuto) return scheme;
  return parts <= 8 ? MetisScheme::kRecursive : MetisScheme::kKway;
}

void check_parts(int64_t parts, int64_t num_nodes) {
  if (parts >= 1 && parts <= num_nodes) return;
  throw OptionError("parts",
                    fmt::format("must be in [1, num_nodes = {}], got {}", num_nodes, parts));
}

at::Tensor assign_random(int64_t num_nodes, int64_t parts, uint64_t seed) {
  check_parts(parts, num_nodes);
  at::Tensor out = at::arange(num_nodes, at::kLong).remainder(parts);
  int64_t* p = out.data_ptr<int64_t>();
  RandomStream rng(stream_key({seed, 0x9a87}));
  for (int64_t i = num_nodes - 1; i > 0; --i) std::swap(p[i], p[rng.uniform(i + 1)]);
  return out;
}

int64_t edge_cut(const graph::CscGraph& graph, const at::Tensor& assignment) {
  GL_CHECK(assignment.numel() == graph.num_nodes && assignment.scalar_type() == at::kLong,
           "assignment must be int64 [num_nodes]");
  const int64_t* part = assignment.data_ptr<int64_t>();
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  return dispatch_index_type(graph.indices.scalar_type(), "graph indices", [&](auto tag) {
    const auto* indices = graph.indices.data_ptr<decltype(tag)>();
    int64_t cut = 0;
#pragma omp parallel for schedule(static) reduction(+ : cut)
    for (int64_t v = 0; v < graph.num_nodes; ++v) {
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) cut += part[indices[e]] != part[v];
    }
    return cut;
  });
}

}  // namespace graphloom::partition
