// BufferPool: the loader's per-batch output tensors (feature rows: hundreds of MB each) reused
// once every view of them is gone, instead of a fresh malloc per batch. Fresh blocks of that
// size either page-fault on every batch (mmap) or, from one heap, fragment it: the next batch's
// small tensors split the freed block and its rows go to a new one, so the heap held two
// batches where one was live (`bench loader`, 15,10,5: 760 MB of heap for ~300 MB batches).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace graphloom::loader {

class BufferPool {
 public:
  // Keeps at most `max_buffers` buffers per name; beyond that take() allocates unpooled.
  // `pinned`: page-locked buffers (a CUDA build with a device), whose rows a device copies
  // without blocking; allocated once and reused, where pinning per batch would copy every row.
  explicit BufferPool(std::size_t max_buffers, bool pinned = false)
      : max_buffers_(max_buffers), pinned_(pinned) {}

  // A contiguous [rows, row_shape...] tensor of `dtype`: a view of a pooled buffer that nothing
  // else references any more, or of a new one with 1/8 spare rows so that the next, slightly
  // bigger batch fits it too. Thread-safe.
  at::Tensor take(const std::string& name, c10::ScalarType dtype,
                  const std::vector<int64_t>& row_shape, int64_t rows);

  std::size_t num_buffers(const std::string& name) const;

 private:
  std::size_t max_buffers_;
  bool pinned_;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<at::Tensor>> buffers_;
};

}  // namespace graphloom::loader
