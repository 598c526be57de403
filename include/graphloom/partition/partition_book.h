// PartitionBook: which part owns a node. Parts own contiguous ranges of the relabelled ids,
// so ownership is a binary search over range ends and global -> local is a subtraction.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace graphloom::partition {

class PartitionBook {
 public:
  // `range_ends[k]` is one past the last node of part k; ascending, the last = num_nodes.
  explicit PartitionBook(std::vector<int64_t> range_ends);

  int64_t num_parts() const { return static_cast<int64_t>(ends_.size()); }
  int64_t num_nodes() const { return ends_.empty() ? 0 : ends_.back(); }
  int64_t begin(int64_t part) const { return part == 0 ? 0 : ends_[part - 1]; }
  int64_t end(int64_t part) const { return ends_[part]; }

  int64_t owner_of(int64_t node) const;
  // int64 [n]: owner of each id. Throws graphloom::Error for ids outside [0, num_nodes).
  at::Tensor owner_of(const at::Tensor& ids) const;
  // int64 [n]: ids - begin(owner): position inside the owning part.
  at::Tensor to_local(const at::Tensor& ids) const;

 private:
  std::vector<int64_t> ends_;
};

}  // namespace graphloom::partition
