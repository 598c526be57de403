// Deterministic, communication-free split of items over the trainers of a partitioned job.
#include "graphloom/distributed/graph/node_split.h"

#include <ATen/ATen.h>

#include "graphloom/base/error.h"
#include "graphloom/distributed/runtime/process_group.h"

namespace graphloom::distributed {

at::Tensor split_items(const at::Tensor& items, const partition::PartitionBook& book, int64_t part,
                       int64_t local_rank, int64_t trainers_per_part, const SplitOptions& options) {
  const int64_t parts = book.num_parts();
  GL_CHECK(part >= 0 && part < parts, "part {} does not exist ({} parts)", part, parts);
  GL_CHECK(trainers_per_part >= 1 && local_rank >= 0 && local_rank < trainers_per_part,
           "local rank {} of {} trainers per part", local_rank, trainers_per_part);
  const at::Tensor owners = book.owner_of(items.to(at::kLong));
  // Positions of each part's items, in item order.
  std::vector<std::vector<int64_t>> owned(parts);
  const int64_t* owner = owners.data_ptr<int64_t>();
  for (int64_t i = 0; i < owners.numel(); ++i) owned[owner[i]].push_back(i);

  std::vector<int64_t> mine = owned[part];
  if (options.force_even) {
    const int64_t n = owners.numel();
    auto quota = [&](int64_t k) { return n / parts + (k < n % parts ? 1 : 0); };
    // Surplus of every part beyond its quota, pooled in part order, fills the short parts in
    // part order: a part keeps as many of its own items as its quota allows.
    std::vector<int64_t> pool;
    for (int64_t k = 0; k < parts; ++k) {
      for (std::size_t j = static_cast<std::size_t>(quota(k)); j < owned[k].size(); ++j) {
        pool.push_back(owned[k][j]);
      }
    }
    std::size_t next = 0;
    for (int64_t k = 0; k < parts; ++k) {
      const int64_t kept = std::min<int64_t>(quota(k), static_cast<int64_t>(owned[k].size()));
      const int64_t missing = quota(k) - kept;
      if (k == part) {
        mine.assign(owned[k].begin(), owned[k].begin() + kept);
        mine.insert(mine.end(), pool.begin() + static_cast<int64_t>(next),
                    pool.begin() + static_cast<int64_t>(next) + missing);
        std::sort(mine.begin(), mine.end());
      }
      next += static_cast<std::size_t>(missing);
    }
  }
  const auto [begin, end] =
      rank_share(static_cast<int64_t>(mine.size()), static_cast<int>(local_rank),
                 static_cast<int>(trainers_per_part));
  return at::tensor(std::vector<int64_t>(mine.begin() + begin, mine.begin() + end), at::kLong);
}

at::Tensor node_split(const at::Tensor& nodes, const partition::PartitionBook& book, int64_t part,
                      int64_t local_rank, int64_t trainers_per_part, const SplitOptions& options) {
  const at::Tensor ids = nodes.to(at::kLong).contiguous();
  return ids.index_select(0, split_items(ids, book, part, local_rank, trainers_per_part, options));
}

}  // namespace graphloom::distributed
