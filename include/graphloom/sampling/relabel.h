// Relabeling one hop's picks into a Block's local ids: the destination nodes first, then every
// new neighbor in ascending global id order. Ascending order costs nothing extra (it falls out
// of a bitmap scan) and makes the feature gather of the next stage read its table forwards.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace graphloom::sampling {

// Scratch state sized to the graph (4 bytes per node, plus a bit per node and thread), reused
// across batches; relabel() leaves it clean (all -1 and all zero) whether it returns or throws.
// Local ids are int32: num_nodes must stay below 2^31 (NeighborSampler checks it).
struct RelabelWorkspace {
  explicit RelabelWorkspace(int64_t num_nodes);
  int64_t num_nodes() const { return static_cast<int64_t>(local_id.size()); }

  std::vector<int32_t> local_id;            // node -> local id, -1 when unset
  std::vector<std::vector<uint64_t>> seen;  // per thread, one bit per node: picked this hop
};

struct Relabeled {
  at::Tensor src_ids;  // int64: dst, then the new neighbors in ascending order
  at::Tensor indices;  // int64, same length as neighbors: positions in src_ids
};

// Relabels `neighbors` (global ids) against `dst` (distinct global ids). Parallel over the
// picks (OpenMP); the result does not depend on the thread count. Throws graphloom::Error on a
// repeated destination node.
Relabeled relabel(const at::Tensor& dst, const at::Tensor& neighbors, RelabelWorkspace& workspace);

}  // namespace graphloom::sampling
