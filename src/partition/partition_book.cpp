// Range-based ownership lookups.
#include "graphloom/partition/partition_book.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "graphloom/base/error.h"

namespace graphloom::partition {

PartitionBook::PartitionBook(std::vector<int64_t> range_ends) : ends_(std::move(range_ends)) {
  GL_CHECK(!ends_.empty(), "a partition book needs at least one part");
  GL_CHECK(ends_[0] >= 0 && std::is_sorted(ends_.begin(), ends_.end()),
           "partition range ends must be non-negative and ascending");
}

int64_t PartitionBook::owner_of(int64_t node) const {
  GL_CHECK_AS(RangeError, node >= 0 && node < num_nodes(), "node id {} is outside [0, {})", node,
              num_nodes());
  return std::upper_bound(ends_.begin(), ends_.end(), node) - ends_.begin();
}

at::Tensor PartitionBook::owner_of(const at::Tensor& ids) const {
  GL_CHECK(ids.scalar_type() == at::kLong, "node ids must be int64");
  if (ids.numel() > 0) {
    const int64_t low = ids.min().item<int64_t>();
    const int64_t high = ids.max().item<int64_t>();
    GL_CHECK_AS(RangeError, low >= 0 && high < num_nodes(), "node id {} is outside [0, {})",
                low < 0 ? low : high, num_nodes());
  }
  const at::Tensor ends = at::tensor(ends_, at::kLong);
  return at::searchsorted(ends, ids, /*out_int32=*/false, /*right=*/true);
}

at::Tensor PartitionBook::to_local(const at::Tensor& ids) const {
  const at::Tensor starts = at::cat({at::zeros({1}, at::kLong), at::tensor(ends_, at::kLong)});
  return ids - starts.index_select(0, owner_of(ids));
}

}  // namespace graphloom::partition
