// node_split / edge_split (DGL's): which of a set of items (training nodes, or edges by their
// owning node) each trainer of a partitioned job takes. Part k lives on machine k; a machine's
// trainers share its items. Every trainer computes the whole assignment from the same inputs,
// so no communication is needed and the shares are disjoint and complete.
#pragma once

#include <ATen/core/Tensor.h>

#include "graphloom/partition/partition_book.h"

namespace graphloom::distributed {

struct SplitOptions {
  // Equal counts for every trainer (differing by at most one): each part keeps up to its quota
  // of the items it owns, and surplus items go to the parts short of theirs. Off: each machine
  // takes exactly the items it owns, however many.
  bool force_even = true;
};

// `items`: int64 global ids (node ids; for edge_split the destination node of each edge).
// Returns the positions in `items` assigned to trainer `local_rank` of the `trainers_per_part`
// trainers of `part`, in ascending order.
at::Tensor split_items(const at::Tensor& items, const partition::PartitionBook& book, int64_t part,
                       int64_t local_rank, int64_t trainers_per_part,
                       const SplitOptions& options = {});

// The training node ids of one trainer: items[split_items(items, ...)].
at::Tensor node_split(const at::Tensor& nodes, const partition::PartitionBook& book, int64_t part,
                      int64_t local_rank, int64_t trainers_per_part,
                      const SplitOptions& options = {});

}  // namespace graphloom::distributed
