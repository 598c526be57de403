// A graph server's part features read from disk (ServerOptions::features_on_disk), private to
// the rpc module: which table, and its DiskRows checked against the partition's declaration.
#pragma once

#include <memory>

#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/features/disk_rows.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::distributed {

// The table ServerOptions::features_on_disk reads from its file.
inline constexpr const char* kDiskFeature = "feat";

// `part`'s "feat" file behind a DiskRows with `options.disk_cache` in front (a degree cache: the
// part's nodes of highest out-degree first). Throws OptionError("feature_storage") when the
// partition has no float32 "feat" stored as is.
std::unique_ptr<features::DiskRows> part_features_on_disk(const ServerOptions& options,
                                                          const partition::PartitionInfo& info,
                                                          const partition::Partition& part);

}  // namespace graphloom::distributed
