// One-hop sampling of a part's own nodes in global ids, shared by the graph servers and by
// DistGraph's in-place local part, so that both pick exactly what the whole graph would
// (internal to the dist module).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "graphloom/partition/partition_format.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::distributed {

// Samples `seeds` (global ids owned by `part`) in `options.direction`. In-edges are numbered
// by position in the part, so their ids are shifted by `first_edge`, the global id of the
// part's first in-edge; out-edges carry their global ids. `where` names the part in the error
// for out-edge sampling on a part written without out-edges.
sampling::SampledEdges sample_part_neighbors(const partition::Partition& part, int64_t first_edge,
                                             const at::Tensor& seeds, int64_t fanout,
                                             sampling::SampleOptions options,
                                             const std::string& where);

}  // namespace graphloom::distributed
