// The cache of remote feature rows that a trainer keeps in front of its DistGraph: one
// construction for the C++ trainer and the Python package.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/features/cached_feature_source.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::distributed {

struct FeatureCacheOptions {
  // none, static ("degree": the rows this machine's part refers to most) or sieve (dynamic).
  features::CachePolicy policy = features::CachePolicy::kNone;
  int64_t bytes = 0;
};

// A cache of "feat" rows in front of `graph`, or null with policy none. `local_part`, the part
// mapped from this machine's shared memory (null: every part over RPC), is read in place, so
// its rows bypass the cache; the static policy ranks rows by how often this machine's part
// refers to them (read from `partition_dir` when no part is mapped).
std::unique_ptr<features::CachedFeatureSource> make_feature_cache(
    const DistGraph& graph, const FeatureCacheOptions& options, int64_t num_nodes,
    const partition::Partition* local_part, const std::filesystem::path& partition_dir,
    int64_t part);

}  // namespace graphloom::distributed
