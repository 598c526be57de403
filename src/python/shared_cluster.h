// Python's DistGraph is a distributed::Cluster held by a shared pointer: the samplers and
// loaders made over it hold its graph and rows through pointers that keep the whole cluster
// (connections, the mapped part, the cache) alive as long as any of them lives.
#pragma once

#include <memory>

#include "graphloom/distributed/graph/cluster.h"

namespace graphloom::python {

inline std::shared_ptr<distributed::DistGraph> shared_graph(
    const std::shared_ptr<distributed::Cluster>& cluster) {
  return {cluster, &cluster->graph()};
}

// The rows loaders gather: through the feature cache when the cluster has one.
inline std::shared_ptr<const features::FeatureSource> shared_rows(
    const std::shared_ptr<distributed::Cluster>& cluster) {
  return {cluster, &cluster->rows()};
}

}  // namespace graphloom::python
