// Relabeling one hop's picks into a Block's local ids: the destination nodes first, then every
// new neighbor in order of first appearance among the picks.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace graphloom::sampling {

// A dense node -> local id table (4 bytes per node), reused across batches; relabel() leaves
// it all -1 whether it returns or throws. Local ids are int32: num_nodes must stay below 2^31
// (NeighborSampler checks it).
struct RelabelWorkspace {
  explicit RelabelWorkspace(int64_t num_nodes);
  int64_t num_nodes() const { return table.numel(); }
  int32_t* local_id() const { return table.data_ptr<int32_t>(); }

  // int32 [num_nodes]: node -> local id, -1 when unset. On huge pages: every pick looks up a
  // random entry.
  at::Tensor table;
};

struct Relabeled {
  at::Tensor src_ids;    // int64: dst, then the new neighbors in order of first appearance
  at::Tensor indices;    // int64, same length as neighbors: positions in src_ids
  at::Tensor src_times;  // int64, as src_ids: each source's time (relabel_timed only)
};

// Relabels `neighbors` (global ids) against `dst` (distinct global ids). Throws
// graphloom::Error on a repeated destination node. Picks on a device other than the CPU are
// relabeled there, by relabel_with_tensor_ops (the workspace is then unused).
Relabeled relabel(const at::Tensor& dst, const at::Tensor& neighbors, RelabelWorkspace& workspace);

// Relabels timed picks (temporal sampling): the sources are distinct (node, time) pairs, the
// destinations' first, then each new pair among the picks in order of first appearance; a
// node at two times is two sources. A hash table of the call's pairs does it (a node's
// distinct times are unbounded, so no dense per-node table serves). Throws graphloom::Error
// on a repeated destination pair.
Relabeled relabel_timed(const at::Tensor& dst, const at::Tensor& dst_times,
                        const at::Tensor& neighbors, const at::Tensor& neighbor_times);

// The same relabeling by sorting, in tensor ops that run on any device: the same src_ids and
// indices as the table pass. Throws graphloom::Error on a repeated destination node. With
// times (both or neither defined), relabel_timed's pairs: the same src_ids, src_times and
// indices as its hash table; relabel_timed calls it for tensors off the CPU.
Relabeled relabel_with_tensor_ops(const at::Tensor& dst, const at::Tensor& neighbors,
                                  const at::Tensor& dst_times = {},
                                  const at::Tensor& neighbor_times = {});

}  // namespace graphloom::sampling
