// make_feature_cache: the bypass range of the local part, the static policy's rows.
#include "graphloom/distributed/graph/feature_cache.h"

#include <spdlog/spdlog.h>

#include "graphloom/base/enum_names.h"

namespace graphloom::distributed {

std::unique_ptr<features::CachedFeatureSource> make_feature_cache(
    const DistGraph& graph, const FeatureCacheOptions& cache, int64_t num_nodes,
    const partition::Partition* local_part, const std::filesystem::path& partition_dir,
    int64_t part) {
  if (cache.policy == features::CachePolicy::kNone) return nullptr;
  features::CacheOptions options{.policy = cache.policy, .capacity_bytes = cache.bytes};
  // Rows the local part holds are read in place: only the others are worth caching. (Servers
  // that read "feat" from disk publish the part without it: then every row is pulled.)
  if (local_part != nullptr && local_part->features.count("feat") > 0) {
    options.bypass_begin = local_part->node_begin;
    options.bypass_end = local_part->node_end;
  }
  if (options.policy == features::CachePolicy::kStatic) {
    const at::Tensor sources = local_part != nullptr
                                   ? local_part->graph.indices
                                   : partition::load_partition(partition_dir, part).graph.indices;
    options.static_rows = features::rows_by_reference_count(sources, num_nodes);
  }
  auto source = std::make_unique<features::CachedFeatureSource>(graph, "feat", std::move(options));
  spdlog::info("feature cache ({}): {} rows of 'feat', {:.1f} MB", name_of(cache.policy),
               source->capacity_rows(), static_cast<double>(cache.bytes) / 1e6);
  return source;
}

}  // namespace graphloom::distributed
