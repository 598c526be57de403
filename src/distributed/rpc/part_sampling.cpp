// sample_part_neighbors: the part's in- or out-edge CSC, sampled in global ids.
#include "graphloom/distributed/rpc/part_sampling.h"

#include <ATen/ATen.h>

#include "graphloom/base/error.h"
#include "graphloom/sampling/local_neighbor_source.h"

namespace graphloom::distributed {

sampling::SampledEdges sample_part_neighbors(const partition::Partition& part, int64_t first_edge,
                                             const at::Tensor& seeds, int64_t fanout,
                                             sampling::SampleOptions options,
                                             const std::string& where) {
  const bool out = options.direction == sampling::EdgeDirection::kOut;
  GL_CHECK(!out || part.out_graph.indptr.defined(),
           "out-edge sampling needs a partition written with `graphloom partition --out-edges`; "
           "{} holds only the in-edges of its nodes",
           where);
  options.first_node = part.node_begin;
  sampling::SampledEdges edges =
      sampling::sample_csc_neighbors(out ? part.out_graph : part.graph, seeds, fanout, options);
  if (!out && edges.edge_ids.defined()) edges.edge_ids.add_(first_edge);
  return edges;
}

}  // namespace graphloom::distributed
