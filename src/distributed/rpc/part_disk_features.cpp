// part_features_on_disk (part_disk_features.h).
#include "part_disk_features.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "graphloom/base/error.h"

namespace graphloom::distributed {

std::unique_ptr<features::DiskRows> part_features_on_disk(const ServerOptions& options,
                                                          const partition::PartitionInfo& info,
                                                          const partition::Partition& part) {
  const auto declared = info.features.find(kDiskFeature);
  if (declared == info.features.end() || declared->second.first != "float32" ||
      info.row_scaled_features.count(kDiskFeature) > 0) {
    throw OptionError("feature_storage",
                      fmt::format("disk reads the part's float32 'feat' rows as stored, and '{}' "
                                  "has {}",
                                  options.partition_dir.string(),
                                  declared == info.features.end()
                                      ? std::string("no 'feat'")
                                      : fmt::format("'feat' as {}", declared->second.first)));
  }
  features::CacheOptions cache = options.disk_cache;
  if (cache.policy == features::CachePolicy::kStatic) {
    const at::Tensor out_degrees =
        partition::load_partition_degrees(options.partition_dir, info).second;
    GL_CHECK(out_degrees.defined(),
             "a degree cache needs the partition's degrees (partition again with this graphloom)");
    cache.static_rows = at::argsort(out_degrees.slice(0, part.node_begin, part.node_end),
                                    /*stable=*/true, /*dim=*/0, /*descending=*/true);
  }
  return std::make_unique<features::DiskRows>(
      kDiskFeature,
      partition::partition_feature_file(options.partition_dir, options.part, kDiskFeature),
      std::move(cache));
}

}  // namespace graphloom::distributed
