// DiskRows (disk_rows.h): a file's rows through an optional cache, counted.
#include "graphloom/features/disk_rows.h"

#include <fmt/format.h>

#include "graphloom/base/error.h"

namespace graphloom::features {

DiskRows::DiskRows(std::string name, const std::filesystem::path& file, CacheOptions cache)
    : name_(std::move(name)),
      disk_(std::make_unique<DiskFeatureSource>(
          std::map<std::string, std::filesystem::path>{{name_, file}})),
      rows_(disk_.get()) {
  if (cache.policy != CachePolicy::kNone) {
    if (cache.capacity_bytes <= 0) {
      throw OptionError("cache_size",
                        fmt::format("{} needs a size (e.g. 256M)", name_of(cache.policy)));
    }
    const CachePolicy policy = cache.policy;
    cache_ = std::make_unique<CachedFeatureSource>(*disk_, name_, std::move(cache));
    rows_ = cache_.get();
    description_ = fmt::format(", {} cache of {} rows", name_of(policy), cache_->capacity_rows());
  }
  description_ = fmt::format("'{}' read from {} on each gather ({}{})", name_, file.string(),
                             disk_->reader(), description_);
}

DiskRows::~DiskRows() = default;

std::map<std::string, double> DiskRows::take_counters() {
  const int64_t read = disk_->bytes_read();
  std::map<std::string, double> counters{{"disk_bytes", static_cast<double>(read - bytes_before_)}};
  bytes_before_ = read;
  if (cache_) {
    const CacheStats stats = cache_->stats(/*reset=*/true);
    counters["cache_hits"] = static_cast<double>(stats.hits);
    counters["cache_misses"] = static_cast<double>(stats.misses);
  }
  return counters;
}

}  // namespace graphloom::features
